import { QueryTypes, type Sequelize } from 'sequelize';
import type { ChainFamily } from '@wcs/core';

/** A token of a chain as the scanner credits it. */
export interface ChainTokenView {
  readonly id: number;
  readonly symbol: string;
  readonly contract: string | null;
  readonly decimals: number;
  /** Smallest credited deposit, base units (0: any amount above zero). */
  readonly minDeposit: bigint;
  /** The token's own confirmation count, or null for the chain's. */
  readonly confirmations: number | null;
}

/** Contract identifiers compare case-insensitively where the chain's addresses do (EVM hex). */
function contractKey(family: ChainFamily, contract: string | null): string {
  if (contract === null) return '';
  return family === 'evm' ? contract.toLowerCase() : contract;
}

/** The active tokens of one chain, looked up by the contract a transfer names (null: native coin). */
export class ChainTokens {
  private constructor(
    private readonly family: ChainFamily,
    private readonly byContract: ReadonlyMap<string, ChainTokenView>,
  ) {}

  static async load(sequelize: Sequelize, chainId: number, family: ChainFamily): Promise<ChainTokens> {
    const rows = await sequelize.query<{ id: number; symbol: string; contract: string | null; decimals: number; min_deposit: string; confirmations: number | null }>(
      'SELECT id, symbol, contract, decimals, min_deposit::text AS min_deposit, confirmations FROM chain_tokens WHERE chain_id = $1 AND active',
      { bind: [chainId], type: QueryTypes.SELECT },
    );
    const map = new Map<string, ChainTokenView>();
    for (const r of rows) {
      map.set(contractKey(family, r.contract), {
        id: r.id, symbol: r.symbol, contract: r.contract, decimals: r.decimals, minDeposit: BigInt(r.min_deposit), confirmations: r.confirmations,
      });
    }
    return new ChainTokens(family, map);
  }

  /** The token, or null when the chain's catalogue does not list this contract. */
  find(contract: string | null): ChainTokenView | null {
    return this.byContract.get(contractKey(this.family, contract)) ?? null;
  }
}
