export * from './adaptive-limit';
export * from './adaptive-settings';
export * from './create-adaptive-limit';
