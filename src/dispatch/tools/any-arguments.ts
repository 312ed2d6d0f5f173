/** The argument check of a tool that takes any JSON object (its upstream or its handler checks it). */
export const acceptAnyArguments = (): void => undefined;
