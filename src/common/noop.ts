/** Does nothing: for a listener, a `.catch` or a remover that has nothing to do. */
export function noop(): void {}
