import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { Command } from 'commander';
import { CliContext } from './context';
import { COMMAND_GROUPS, commandGroupsFor } from './main';

describe('wcs: command groups loaded on demand', () => {
  const quiet = () => new CliContext({}, { out: () => undefined, err: () => undefined });

  it('each group registers exactly the top-level commands it is listed with, and no two groups list the same one', () => {
    const seen: string[] = [];
    for (const group of COMMAND_GROUPS) {
      const program = new Command('wcs');
      group.load()(program, quiet());
      expect(program.commands.map((c) => c.name()), `the group of ${group.commands.join(', ')}`).to.deep.equal([...group.commands]);
      seen.push(...group.commands);
    }
    expect(new Set(seen).size).to.equal(seen.length);
  });

  it('a command line that starts with a command loads its group only; any other loads every group, in --help order', () => {
    for (const group of COMMAND_GROUPS) {
      for (const command of group.commands) expect(commandGroupsFor(['node', 'wcs', command, '--json'])).to.deep.equal([group]);
    }
    for (const args of [[], ['--help'], ['-h', 'app'], ['help', 'app'], ['--version'], ['--json', 'app', 'list'], ['bogus'], ['App']]) {
      expect(commandGroupsFor(['node', 'wcs', ...args]), args.join(' ')).to.equal(COMMAND_GROUPS);
    }
  });

  it('a command that needs no database loads neither the storage layer nor the HTTP server, winston or zod', () => {
    // a fresh process: this test process has loaded all of them already
    const script = `
      require('./cli/main').main(['node', 'wcs', 'keygen', '--json'], {}, { out: () => {}, err: (s) => process.stderr.write(s) }).then((code) => {
        const loaded = Object.keys(require.cache).filter((f) => /node_modules\\/(sequelize|pg|express|winston|zod|prom-client|ioredis)\\//.test(f) || /dist\\/service\\.js$/.test(f));
        process.stdout.write(JSON.stringify({ code, loaded: [...new Set(loaded.map((f) => f.replace(/^.*node_modules\\/([^/]+)\\/.*$/, '$1').replace(/^.*dist\\//, '')))] }));
      });`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: path.join(__dirname, '..'), encoding: 'utf8' })) as { code: number; loaded: string[] };
    expect(out).to.deep.equal({ code: 0, loaded: [] });
  });
});
