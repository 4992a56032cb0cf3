export { loadConfig, ConfigError, type ServiceConfig, type ConfigFile } from './config/config';
export { createLogger, redact, type Logger } from './config/logger';
export { WcsService, openStorage, type ServiceOptions, type StorageHandle } from './service';
export { type ApiRoute, type RequestContext, API_PREFIX } from './http/routes';
export { BIZ_TYPES, type BizType, type ApplicationView, type CreatedApplication } from './apps/applications';
export { stringToSign, hmacHex, sha256Hex } from './auth/signature';
export { MIGRATIONS } from './db/migrations';
export { DEFAULT_CHAINS, DEFAULT_TOKENS } from './catalogue/default-catalogue';
