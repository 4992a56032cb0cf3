import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { PLUGIN_API_VERSION } from '../adapter';
import { AdapterRegistry } from '../registry';
import { adapterPackageRequire } from './package-loader';

const NAME = '@wcs-loader-test/adapter-fam';

/** A package folder outside any node_modules core resolves from: what a chain team's adapter folder is to core installed in it. */
function writePackage(dir: string, manifest: Record<string, unknown>, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest));
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
}

const pluginSource = (entry: string) =>
  `exports.plugin = { name: ${JSON.stringify(NAME)}, entry: ${JSON.stringify(entry)}, pluginApiVersion: ${PLUGIN_API_VERSION}, families: ['fam'], traits: { fam: { curve: 'ed25519', addressing: 'hd' } }, create() { throw new Error('not here'); } };`;

describe('the shared suite loads the package under test from its own folder (package-loader)', () => {
  let root: string;
  before(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'wcs-loader-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("core's own resolution cannot find a package that is not beside core: the reason for the package's folder", () => {
    expect(() => require(NAME)).to.throw(/Cannot find module/);
  });

  it('loads the package by its main from the folder the test gives, through the registry', () => {
    const dir = path.join(root, 'by-main');
    writePackage(dir, { name: NAME, version: '1.0.0', main: 'lib/main.js' }, { 'lib/main.js': pluginSource('main') });
    const requireFn = adapterPackageRequire(NAME, dir);
    expect((requireFn(NAME) as { plugin: { entry: string } }).plugin.entry).to.equal('main');
    const reg = AdapterRegistry.load([NAME], requireFn);
    expect(reg.families()).to.deep.equal(['fam']);
    expect(reg.traitsOf('fam')).to.deep.equal({ curve: 'ed25519', addressing: 'hd' });
  });

  it('loads it through its exports when it has them (a self-reference, as a consumer resolves it), not its main', () => {
    const dir = path.join(root, 'by-exports');
    writePackage(dir, { name: NAME, version: '1.0.0', main: 'lib/main.js', exports: { '.': './lib/exported.js', './package.json': './package.json' } }, {
      'lib/main.js': pluginSource('main'),
      'lib/exported.js': pluginSource('exports'),
    });
    expect((adapterPackageRequire(NAME, dir)(NAME) as { plugin: { entry: string } }).plugin.entry).to.equal('exports');
  });

  it('without a folder: the working directory when its package.json names the package, else core\'s own resolution', () => {
    const dir = path.join(root, 'cwd');
    writePackage(dir, { name: NAME, version: '1.0.0', main: 'index.js' }, { 'index.js': pluginSource('cwd') });
    expect((adapterPackageRequire(NAME, undefined, dir)(NAME) as { plugin: { entry: string } }).plugin.entry).to.equal('cwd');
    const other = path.join(root, 'other');
    writePackage(other, { name: '@someone/else', version: '1.0.0' }, {});
    expect(() => adapterPackageRequire(NAME, undefined, other)(NAME)).to.throw(/Cannot find module/);
  });

  it("refuses a folder whose package.json names another package, or that has none, saying which", () => {
    const dir = path.join(root, 'misnamed');
    writePackage(dir, { name: '@someone/adapter-fam', version: '1.0.0', main: 'index.js' }, { 'index.js': pluginSource('misnamed') });
    expect(() => adapterPackageRequire(NAME, dir)).to.throw(/names the package "@someone\/adapter-fam"; the plugin's name is @wcs-loader-test\/adapter-fam/);
    expect(() => adapterPackageRequire(NAME, path.join(root, 'nowhere'))).to.throw(/has no readable package\.json/);
  });
});
