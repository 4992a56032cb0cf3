import { DataTypes, Model, type Sequelize, type InferAttributes, type InferCreationAttributes, type CreationOptional } from 'sequelize';

/* Typed model shapes. They are never bound to a connection themselves: defineModels() makes
 * a subclass of each per Sequelize instance. */
export class ApplicationModel extends Model<InferAttributes<ApplicationModel>, InferCreationAttributes<ApplicationModel>> {
  declare id: CreationOptional<number>;
  declare name: string;
  declare environment: 'test' | 'live';
  declare apiKey: string;
  declare status: CreationOptional<'ACTIVE' | 'DISABLED'>;
  declare enabledChains: string[];
  /** Own rate limit (both set) or the service default (both null). */
  declare rateLimitRps: CreationOptional<number | null>;
  declare rateLimitBurst: CreationOptional<number | null>;
  /** RECHARGE_CREDITED: one recharge_credited callback per deposit at SETTLED (docs/chain-events.md). */
  declare rechargeCredited: CreationOptional<boolean>;
  /** Callback deliveries per second to each endpoint, or null: no limit (docs/callbacks.md, "Rate limit"). */
  declare callbackRateLimit: CreationOptional<number | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export class ApplicationSecretModel extends Model<
  InferAttributes<ApplicationSecretModel>,
  InferCreationAttributes<ApplicationSecretModel>
> {
  declare id: CreationOptional<number>;
  declare applicationId: number;
  declare ciphertext: Buffer;
  declare iv: Buffer;
  declare authTag: Buffer;
  declare keyId: string;
  declare createdAt: CreationOptional<Date>;
  declare expiresAt: Date | null;
}

export class ApplicationCallbackModel extends Model<
  InferAttributes<ApplicationCallbackModel>,
  InferCreationAttributes<ApplicationCallbackModel>
> {
  declare applicationId: number;
  declare bizType: string;
  declare url: string;
  declare updatedAt: CreationOptional<Date>;
}

export class ChainModel extends Model<InferAttributes<ChainModel>, InferCreationAttributes<ChainModel>> {
  declare id: number;
  declare code: string;
  declare name: string;
  declare family: string;
  declare environment: 'test' | 'live';
  declare network: string;
  declare curve: string;
  declare addressing: 'hd' | 'memo';
  declare nativeSymbol: string;
  declare decimals: number;
  declare confirmations: number;
  declare evmChainId: string | null;
  declare options: CreationOptional<Record<string, string>>;
  declare active: CreationOptional<boolean>;
  declare updatedAt: CreationOptional<Date>;
}

export class ChainTokenModel extends Model<InferAttributes<ChainTokenModel>, InferCreationAttributes<ChainTokenModel>> {
  declare id: number;
  declare chainId: number;
  declare symbol: string;
  declare name: string;
  declare contract: string | null;
  declare decimals: number;
  declare active: CreationOptional<boolean>;
  declare updatedAt: CreationOptional<Date>;
}

/**
 * Defines the models on one Sequelize instance. Models are per instance (never global
 * classes bound to "the last" connection), so several services can live in one process.
 * The tables come from migrations, never from sync().
 */
export function defineModels(sequelize: Sequelize): Models {
  const opts = { sequelize, underscored: true, timestamps: false } as const;
  class Application extends ApplicationModel {}
  Application.init(
    {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      name: { type: DataTypes.STRING(100), allowNull: false },
      environment: { type: DataTypes.STRING(8), allowNull: false },
      apiKey: { type: DataTypes.STRING(64), allowNull: false, unique: true },
      status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'ACTIVE' },
      enabledChains: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false, defaultValue: [] },
      rateLimitRps: { type: DataTypes.INTEGER, allowNull: true, field: 'rate_limit_rps' },
      rateLimitBurst: { type: DataTypes.INTEGER, allowNull: true, field: 'rate_limit_burst' },
      rechargeCredited: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false, field: 'recharge_credited' },
      callbackRateLimit: { type: DataTypes.INTEGER, allowNull: true, defaultValue: null, field: 'callback_rate_limit' },
      createdAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW },
      updatedAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW },
    },
    { ...opts, tableName: 'applications' },
  );
  class ApplicationSecret extends ApplicationSecretModel {}
  ApplicationSecret.init(
    {
      id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
      applicationId: { type: DataTypes.INTEGER, allowNull: false },
      ciphertext: { type: DataTypes.BLOB, allowNull: false },
      iv: { type: DataTypes.BLOB, allowNull: false },
      authTag: { type: DataTypes.BLOB, allowNull: false },
      keyId: { type: DataTypes.STRING(32), allowNull: false },
      createdAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW },
      expiresAt: { type: DataTypes.DATE, allowNull: true },
    },
    { ...opts, tableName: 'application_secrets' },
  );
  class ApplicationCallback extends ApplicationCallbackModel {}
  ApplicationCallback.init(
    {
      applicationId: { type: DataTypes.INTEGER, primaryKey: true },
      bizType: { type: DataTypes.STRING(16), primaryKey: true },
      url: { type: DataTypes.STRING(2048), allowNull: false },
      updatedAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW },
    },
    { ...opts, tableName: 'application_callbacks' },
  );
  class Chain extends ChainModel {}
  Chain.init(
    {
      id: { type: DataTypes.INTEGER, primaryKey: true },
      code: { type: DataTypes.STRING(16), allowNull: false },
      name: { type: DataTypes.STRING(64), allowNull: false },
      family: { type: DataTypes.STRING(16), allowNull: false },
      environment: { type: DataTypes.STRING(8), allowNull: false },
      network: { type: DataTypes.STRING(64), allowNull: false },
      curve: { type: DataTypes.STRING(16), allowNull: false },
      addressing: { type: DataTypes.STRING(8), allowNull: false },
      nativeSymbol: { type: DataTypes.STRING(16), allowNull: false },
      decimals: { type: DataTypes.INTEGER, allowNull: false },
      confirmations: { type: DataTypes.INTEGER, allowNull: false },
      evmChainId: { type: DataTypes.BIGINT, allowNull: true },
      options: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
      active: { type: DataTypes.BOOLEAN, defaultValue: true },
      updatedAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW },
    },
    { ...opts, tableName: 'chains' },
  );
  class ChainToken extends ChainTokenModel {}
  ChainToken.init(
    {
      id: { type: DataTypes.INTEGER, primaryKey: true },
      chainId: { type: DataTypes.INTEGER, allowNull: false },
      symbol: { type: DataTypes.STRING(16), allowNull: false },
      name: { type: DataTypes.STRING(64), allowNull: false },
      contract: { type: DataTypes.STRING(128), allowNull: true },
      decimals: { type: DataTypes.INTEGER, allowNull: false },
      active: { type: DataTypes.BOOLEAN, defaultValue: true },
      updatedAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW },
    },
    { ...opts, tableName: 'chain_tokens' },
  );
  return {
    Application,
    ApplicationSecret,
    ApplicationCallback,
    Chain,
    ChainToken,
  };
}

export interface Models {
  readonly Application: typeof ApplicationModel;
  readonly ApplicationSecret: typeof ApplicationSecretModel;
  readonly ApplicationCallback: typeof ApplicationCallbackModel;
  readonly Chain: typeof ChainModel;
  readonly ChainToken: typeof ChainTokenModel;
}

export type ApplicationRow = ApplicationModel;
