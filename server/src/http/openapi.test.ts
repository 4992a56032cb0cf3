import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { supportRoutes } from './support-routes';
import { API_PREFIX } from './routes';
import { addressRoutes } from './address-routes';
import type { AddressService } from '../addresses/address-service';
import { chainJson } from './support-routes';
import type { Catalogue } from '../catalogue/catalogue';
import { resolveCatalogue } from '../catalogue/catalogue';

describe('docs/openapi.json matches the server', () => {
  const doc = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../openapi.json'), 'utf8'));

  it('documents exactly the signed routes the server mounts, with their methods', () => {
    const routes = [...supportRoutes({} as Catalogue), ...addressRoutes({} as AddressService)];
    const served = routes.map((r) => `${r.method} ${API_PREFIX}${r.path}`).sort();
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([p]) => p.startsWith(API_PREFIX))
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    expect(documented).to.deep.equal(served);
  });

  it('the Chain schema lists exactly the fields the server returns', () => {
    const chain = resolveCatalogue({}).chains[0]!;
    const fields = Object.keys(chainJson({ ...chain, tokens: [] })).sort();
    expect(Object.keys(doc.components.schemas.Chain.properties).sort()).to.deep.equal(fields);
    expect([...doc.components.schemas.Chain.required].sort()).to.deep.equal(fields);
  });
});
