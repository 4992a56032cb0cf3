import { z } from 'zod';

/** Withdrawals: the order records of withdraw/create, get, list and batch-create. */

export const Withdraw = z.object({
  id: z.int(),
  appOrderNo: z.string(),
  chainCode: z.string(),
  chainTokenId: z.int(),
  token: z.string().describe('Token symbol.'),
  amount: z.string(),
  fee: z.string().describe("In the chain's native coin: the most the transaction can cost (estimated on acceptance), the actual fee once mined."),
  fromAddress: z.string().describe("The application's hot wallet on the chain."),
  toAddress: z.string(),
  memo: z.string().nullable(),
  txHash: z.string().nullable(),
  blockHeight: z.int().nullable(),
  confirmations: z.int(),
  status: z.enum(['PROCESSING', 'BROADCASTED', 'CONFIRMING', 'SUCCESS', 'FAILED']),
  failReason: z.string().nullable(),
  riskLevel: z.string().nullable(),
  riskReason: z.string().nullable(),
  callbackTaskId: z.int().nullable().describe("The order's latest withdraw callback task (callback/tasks), null before the first."),
  createTime: z.string(),
  updateTime: z.string(),
}).meta({ id: 'Withdraw', description: "The spec's withdrawal record (WithdrawDetailRespVO) with the record id first and the chainTokenId (docs/withdrawals.md)." });
export type Withdraw = z.infer<typeof Withdraw>;

export const WithdrawBatchResult = z.object({
  total: z.int(),
  successCount: z.int(),
  failedCount: z.int(),
  items: z.array(z.object({
    appOrderNo: z.string().nullable(),
    success: z.boolean(),
    withdraw: Withdraw.nullable(),
    errorCode: z.int().nullable(),
    errorMessage: z.string().nullable(),
  })),
}).meta({ id: 'WithdrawBatchResult' });
export type WithdrawBatchResult = z.infer<typeof WithdrawBatchResult>;
