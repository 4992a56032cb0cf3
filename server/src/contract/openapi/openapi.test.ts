import { expect } from 'chai';
import * as fs from 'node:fs';
import { z } from 'zod';
import { openApiDocument, OPERATIONS } from './index';
import { OPENAPI_PATH, openApiText } from './write';

describe('the OpenAPI document is generated from the contract', () => {
  it('server/openapi.json is exactly what the contract builds (npm run openapi -w @wcs/server rewrites it)', () => {
    expect(fs.readFileSync(OPENAPI_PATH, 'utf8') === openApiText(), 'server/openapi.json differs from the contract: run npm run openapi -w @wcs/server').to.equal(true);
  });

  it('a change to a schema changes the document (the check can fail)', () => {
    const before = openApiText();
    const op = OPERATIONS.find((o) => o.operationId === 'createAddress')!;
    const shape = (op.body as z.ZodObject).shape as Record<string, z.ZodType>;
    const saved = shape.externalUserId!;
    const meta = z.globalRegistry.get(saved);
    z.globalRegistry.remove(saved);
    z.globalRegistry.add(saved, { ...meta, description: 'changed by the test' });
    try {
      expect(openApiText()).to.not.equal(before);
    } finally {
      z.globalRegistry.remove(saved);
      if (meta) z.globalRegistry.add(saved, meta);
    }
    expect(openApiText()).to.equal(before);
  });

  it('every request body, record and event is a named component; the document names no component the contract lacks', () => {
    const doc = openApiDocument() as { components: { schemas: Record<string, unknown> } };
    const text = JSON.stringify(doc);
    const refs = new Set([...text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!));
    for (const r of refs) expect(doc.components.schemas, r).to.have.property(r);
    for (const id of ['AddressCreateRequest', 'WithdrawItem', 'ChainSubscriptionUpdateRequest', 'Recharge', 'Withdraw', 'RechargeEvent', 'CollectEvent', 'DelegationEvent', 'ErrorEnvelope', 'BusinessErrorEnvelope']) {
      expect(doc.components.schemas, id).to.have.property(id);
    }
  });

  it('a parameter is documented from the query schema the route parses with: required, type, bounds', () => {
    const doc = openApiDocument() as { paths: Record<string, Record<string, { parameters?: Array<{ name: string; required: boolean; schema: Record<string, unknown> }> }>> };
    const list = doc.paths['/api/v1/wallet/recharge/list']!.get!.parameters!;
    expect(list.find((p) => p.name === 'pageSize')).to.deep.include({ required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 20 } });
    expect(doc.paths['/api/v1/wallet/address/list-by-user']!.get!.parameters!.find((p) => p.name === 'externalUserId')!.required).to.equal(true);
  });
});
