import { expect } from 'chai';
import { Sequelize } from 'sequelize';
import { resolveCatalogue, seedCatalogue, Catalogue } from './catalogue';
import { ConfigError } from '../config/config';
import { createTestDatabase, type TestDatabase } from '../testing';
import { migrate } from '../db/migrations';
import { defineModels, type Models } from '../db/models';

const BASE = { id: 9, code: 'BASE', name: 'Base', family: 'evm' as const, environment: 'live' as const, network: 'mainnet', nativeSymbol: 'ETH', decimals: 18, confirmations: 12, evmChainId: 8453 };

describe('catalogue: chains and tokens as data', () => {
  it('default catalogue lists the spec chains on both environments with stable ids', () => {
    const { chains, tokens } = resolveCatalogue({});
    expect(chains.filter((c) => c.environment === 'live').map((c) => c.code)).to.deep.equal(['BTC', 'ETH', 'BSC', 'POLYGON', 'SOL', 'XRP', 'XLM', 'EOS']);
    expect(chains.filter((c) => c.environment === 'test').map((c) => c.id)).to.deep.equal([101, 102, 103, 104, 105, 106, 107, 108]);
    expect(chains.find((c) => c.code === 'XRP')!.addressing).to.equal('memo');
    expect(chains.find((c) => c.code === 'SOL')!.curve).to.equal('ed25519');
    const usdt = tokens.find((t) => t.id === 201)!;
    expect(usdt).to.include({ symbol: 'USDT', decimals: 6, chainCode: 'ETH', environment: 'live' });
    for (const c of chains) expect(tokens.some((t) => t.chainCode === c.code && t.environment === c.environment && t.contract === null), c.code).to.equal(true);
  });

  it('adds an EVM chain by config alone, and refuses inconsistent entries', () => {
    const { chains } = resolveCatalogue({ chains: [BASE] });
    expect(chains.find((c) => c.code === 'BASE')).to.include({ family: 'evm', evmChainId: 8453, curve: 'secp256k1' });
    expect(() => resolveCatalogue({ chains: [{ ...BASE, evmChainId: null }] })).to.throw(ConfigError, /evmChainId is required/);
    expect(() => resolveCatalogue({ chains: [{ ...BASE, id: 2 }] })).to.throw(ConfigError, /id 2 is used by both/);
    expect(() => resolveCatalogue({ tokens: [{ id: 999, chainCode: 'NOPE', environment: 'live', symbol: 'X', name: 'X', contract: '0x1', decimals: 6 }] })).to.throw(ConfigError, /not in the catalogue/);
    expect(() => resolveCatalogue({ tokens: [{ id: 999, chainCode: 'ETH', environment: 'live', symbol: 'X', name: 'X', contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 }] })).to.throw(ConfigError, /listed twice/);
    expect(resolveCatalogue({ includeDefaultCatalogue: false, chains: [BASE] }).chains.map((c) => c.code)).to.deep.equal(['BASE']);
  });

  it('adds a chain of a family an adapter package brings: its curve and addressing are the package\'s; without a package serving it the config is refused', () => {
    const TON = { id: 9100, code: 'TON', name: 'TON', family: 'ton', environment: 'live' as const, network: 'mainnet', nativeSymbol: 'TON', decimals: 9, confirmations: 1 };
    expect(() => resolveCatalogue({ chains: [TON] })).to.throw(ConfigError, /chains: live:TON: no adapter package serves family ton/);
    const asked: string[] = [];
    const traitsOf = (f: string) => {
      asked.push(f);
      return f === 'ton' ? { curve: 'ed25519' as const, addressing: 'memo' as const } : null;
    };
    const { chains } = resolveCatalogue({ includeDefaultCatalogue: false, chains: [TON, BASE] }, (f) => (f === 'evm' ? { curve: 'secp256k1', addressing: 'hd' } : traitsOf(f)));
    expect(chains.find((c) => c.code === 'TON')).to.include({ family: 'ton', curve: 'ed25519', addressing: 'memo', evmChainId: null });
    expect(asked).to.deep.equal(['ton']);
  });

  describe('seeding into Postgres', () => {
    let db: TestDatabase;
    let sequelize: Sequelize;
    let models: Models;
    before(async () => {
      db = await createTestDatabase();
      sequelize = new Sequelize(db.url, { dialect: 'postgres', logging: false });
      models = defineModels(sequelize);
      await migrate(sequelize);
    });
    after(async () => {
      await sequelize.close();
      await db.drop();
    });

    it('is idempotent, keeps ids permanent and deactivates removed entries', async () => {
      await seedCatalogue(sequelize, models, {});
      await seedCatalogue(sequelize, models, {});
      let cat = await Catalogue.load(models);
      expect(cat.chains('live')).to.have.length(8);
      await seedCatalogue(sequelize, models, { chains: [BASE] });
      cat = await Catalogue.load(models);
      expect(cat.chain('live', 'BASE').id).to.equal(9);
      // the id of a stored chain cannot change
      let err: unknown;
      try {
        await seedCatalogue(sequelize, models, { chains: [{ ...BASE, id: 10 }] });
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as Error).message).to.match(/ids are permanent/);
      await seedCatalogue(sequelize, models, {});
      cat = await Catalogue.load(models);
      expect(cat.has('live', 'BASE')).to.equal(false);
      expect(() => cat.chain('live', 'BASE')).to.throw(/Unknown chain code: BASE/);
      const [rows] = await sequelize.query(`SELECT active FROM chains WHERE id = 9`);
      expect(rows).to.deep.equal([{ active: false }]);
    });
  });
});
