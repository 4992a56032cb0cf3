/**
 * What the deposit e2e tests (deposits-*.test.ts) read: the API paths they call, a recharge record
 * (recharge/get, recharge/list, `wcs deposits assign --json`), the body of a RECHARGE callback, an
 * unattributed deposit (`wcs deposits unattributed --json`), and the exact field lists of the first
 * two as the API spec gives them.
 */

export const ADDRESS_CREATE = '/api/v1/wallet/address/create';
export const RECHARGE_LIST = '/api/v1/wallet/recharge/list';
export const RECHARGE_GET = '/api/v1/wallet/recharge/get';

/** The keys of a RECHARGE callback body, sorted. */
export const EVENT_FIELDS = ['address', 'amount', 'applicationId', 'blockHeight', 'chainId', 'chainTokenId', 'confirmations', 'event', 'id', 'minConfirmations', 'txHash', 'txStatus'];
/** The keys of a recharge record (recharge/get), sorted. */
export const RECHARGE_FIELDS = [
  'address', 'amount', 'applicationId', 'blockHash', 'blockHeight', 'chainCode', 'chainId', 'chainTokenId', 'confirmations', 'confirmedTime', 'contractAddress',
  'createTime', 'externalUserId', 'failReason', 'failedTime', 'fromAddress', 'id', 'memo', 'minConfirmations', 'position', 'settledTime', 'tokenSymbol', 'txHash',
  'txStatus', 'updateTime',
];

export interface Recharge {
  id: number; applicationId: number; chainId: number; chainCode: string; chainTokenId: number; tokenSymbol: string; contractAddress: string | null;
  externalUserId: string; address: string; memo: string | null; fromAddress: string | null; amount: string; txHash: string; position: number;
  blockHeight: number | null; blockHash: string | null; txStatus: string; confirmations: number; minConfirmations: number; failReason: string | null;
  confirmedTime: string | null; settledTime: string | null; failedTime: string | null; createTime: string; updateTime: string;
}

/** A RECHARGE callback body. */
export interface RechargeEvent {
  event: string; id: number; applicationId: number; chainId: number; chainTokenId: number; address: string; amount: string; txHash: string; blockHeight: number;
  txStatus: string; confirmations: number; minConfirmations: number;
}

export interface Unattributed {
  id: number; chainId: number; chainCode: string; environment: string; tokenSymbol: string; address: string; memo: string | null; amount: string;
  txHash: string; position: number; blockHeight: number; reason: string; rechargeId: number | null; createTime: string;
}
