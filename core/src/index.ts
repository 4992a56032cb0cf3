export * from './errors';
export * from './money';
export * from './time';
export * from './chain';
export * from './errors-doc';
export * from './keystore';
export * from './adapter';
export * from './registry';
