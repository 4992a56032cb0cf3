import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** The `name` in a folder's package.json, or null when it has none (or no package.json). */
export function packageNameAt(dir: string): string | null {
  try {
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown };
    return typeof pkg.name === 'string' ? pkg.name : null;
  } catch {
    return null;
  }
}

/**
 * How the shared adapter suite loads the package under test by its name, as the service's
 * registry would (`AdapterRegistry.load([name], requireFn)`):
 *
 * - from `packageDir` (the adapter's own folder, given by its test) when given;
 * - else from the working directory when its package.json names the package (`npm test` runs in
 *   the package's folder);
 * - else with core's own `require` (a workspace, where the package is linked beside core).
 *
 * Resolving the name from core's own location fails for a package that installed core as a
 * dependency (core sits in the package's node_modules, the package is not beside it): hence the
 * package's own folder. There the package is loaded as a consumer's `require(name)` would load it:
 * through its `exports` (a self-reference) when it has them, else its `main`.
 */
export function adapterPackageRequire(pluginName: string, packageDir?: string, cwd: string = process.cwd()): (id: string) => unknown {
  const dir = packageDir !== undefined ? path.resolve(packageDir) : packageNameAt(cwd) === pluginName ? cwd : null;
  if (dir === null) return require;
  const manifest = path.join(dir, 'package.json');
  let pkg: { name?: unknown; exports?: unknown };
  try {
    pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown; exports?: unknown };
  } catch (e) {
    throw new Error(`the adapter package's folder ${dir} has no readable package.json: ${(e as Error).message}`, { cause: e });
  }
  if (pkg.name !== pluginName) {
    throw new Error(`${manifest} names the package ${JSON.stringify(pkg.name)}; the plugin's name is ${pluginName} (a plugin's name is its npm package name: what operators write in \`adapters\`)`);
  }
  const own = createRequire(manifest);
  return (id) => (id === pluginName ? own(pkg.exports !== undefined ? pluginName : dir) : own(id));
}
