export * from './overload.options';
export * from './pressure-source';
export * from './shed-curve';
export * from './overload-guard';
export * from './overload.module-definition';
export * from './overload.module';
