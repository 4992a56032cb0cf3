import { expect } from 'chai';
import { ErrorCodes } from '@wcs/core';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { supportRoutes } from './support-routes';
import { API_PREFIX } from './routes';
import { addressRoutes } from './address-routes';
import type { AddressService } from '../addresses/address-service';
import { chainJson } from './support-routes';
import type { Catalogue } from '../catalogue/catalogue';
import { resolveCatalogue } from '../catalogue/catalogue';
import { callbackRoutes } from './callback-routes';
import { rechargeRoutes } from './recharge-routes';
import { withdrawRoutes } from './withdraw-routes';
import type { WithdrawService } from '../withdrawals/withdraw-service';
import type { RechargeService } from '../deposits/recharge-service';
import type { CallbackService } from '../callbacks/callback-service';

describe('docs/openapi.json matches the server', () => {
  const doc = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../openapi.json'), 'utf8'));

  it('documents exactly the signed routes the server mounts, with their methods', () => {
    const routes = [...supportRoutes({} as Catalogue, () => 'NO_RPC'), ...addressRoutes({} as AddressService), ...callbackRoutes({} as CallbackService), ...rechargeRoutes({} as RechargeService), ...withdrawRoutes({} as WithdrawService)];
    const served = routes.map((r) => `${r.method} ${API_PREFIX}${r.path}`).sort();
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([p]) => p.startsWith(API_PREFIX))
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    expect(documented).to.deep.equal(served);
  });

  it('the Chain schema lists exactly the fields the server returns', () => {
    const chain = resolveCatalogue({}).chains[0]!;
    const fields = Object.keys(chainJson({ ...chain, tokens: [] }, 'NO_RPC')).sort();
    expect(Object.keys(doc.components.schemas.Chain.properties).sort()).to.deep.equal(fields);
    expect([...doc.components.schemas.Chain.required].sort()).to.deep.equal(fields);
  });

  it('operations that need a key document 503 KEYSTORE_UNAVAILABLE with the catalogue\'s code and message; /readyz its keystore check', () => {
    const schema = doc.components.responses.KeyStoreUnavailable.content['application/json'].schema;
    expect(schema.allOf[0]).to.deep.equal({ $ref: '#/components/schemas/ErrorEnvelope' });
    expect(schema.allOf[1].properties).to.deep.equal({
      code: { const: ErrorCodes.KEYSTORE_UNAVAILABLE.code },
      msg: { const: ErrorCodes.KEYSTORE_UNAVAILABLE.message },
    });
    expect(ErrorCodes.KEYSTORE_UNAVAILABLE.httpStatus).to.equal(503);
    for (const p of ['/wallet/address/create', '/wallet/address/batch-create']) {
      expect(doc.paths[API_PREFIX + p].post.responses['503'], p).to.deep.equal({ $ref: '#/components/responses/KeyStoreUnavailable' });
    }
    expect(doc.components.schemas.ReadyChecks.properties.keystore.description).to.match(/unavailable: <reason>/);
  });

  it('the callback task and attempt schemas list exactly the fields of the spec, all required', () => {
    const task = ['id', 'bizType', 'bizId', 'url', 'status', 'retryTimes', 'maxRetryTimes', 'nextRetryTime', 'lastResponseSummary', 'lastError', 'createTime', 'updateTime'];
    const attempt = ['id', 'callbackTaskId', 'attemptNo', 'requestHeadersSummary', 'requestBodySummary', 'requestBodyLength', 'requestBodySha256', 'responseStatus',
      'responseContentType', 'responseBodySummary', 'responseBodyLength', 'responseBodySha256', 'accepted', 'latencyMs', 'errorReason', 'nextRetryTime', 'createTime'];
    for (const [name, fields] of [['CallbackTask', task], ['CallbackAttempt', attempt]] as const) {
      expect(Object.keys(doc.components.schemas[name].properties).sort(), name).to.deep.equal([...fields].sort());
      expect([...doc.components.schemas[name].required].sort(), name).to.deep.equal([...fields].sort());
    }
  });
});
