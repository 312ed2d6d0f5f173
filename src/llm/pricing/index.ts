export * from './cost';
export * from './input-token-estimate';
export * from './model-id';
export * from './price';
export * from './price-table';
export * from './shipped-prices';
export * from './shipped-price';
export * from './context-windows';
