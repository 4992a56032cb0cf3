import { InvalidArgumentError, Option } from 'commander';
import { loadConfig, type ServiceConfig } from '../config/config';
import { createLogger, type Logger } from '../config/logger';
import type { StorageHandle } from '../service';
import { withRecordedDevnetToken } from '../deposits/devnets';

/** Where the CLI writes: stdout and stderr (tests pass their own). */
export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** What every command group needs: the environment, output, the --json switch and storage. */
export class CliContext {
  /** Set by the command's --json option (and, before parsing, by --json anywhere in argv). */
  json = false;
  /** A command that printed its report but found a problem sets this (e.g. 1); main returns it. */
  exitCode = 0;

  constructor(
    readonly env: NodeJS.ProcessEnv,
    readonly io: Io,
  ) {}

  /** The configuration; in dev mode with the devnet token the running `wcs start` credits (see devnets.ts). */
  config(): ServiceConfig {
    return withRecordedDevnetToken(loadConfig(this.env));
  }

  /** The CLI's own logger: warnings only unless WCS_LOG_LEVEL / WCS_LOG_FORMAT say otherwise. */
  logger(cfg: ServiceConfig): Logger {
    return createLogger({ level: this.env.WCS_LOG_LEVEL ? cfg.logLevel : 'warn', format: this.env.WCS_LOG_FORMAT ? cfg.logFormat : 'pretty' });
  }

  /**
   * Runs fn with storage open (migrations applied, catalogue seeded), then closes it. The storage
   * layer is loaded here, by the commands that use it, not by every command.
   */
  async withStorage<T>(fn: (s: StorageHandle) => Promise<T>, cfg: ServiceConfig = this.config()): Promise<T> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { openStorage } = require('../service') as typeof import('../service');
    const storage = await openStorage(cfg, this.logger(cfg));
    try {
      return await fn(storage);
    } finally {
      await storage.close();
    }
  }

  /** Prints data as JSON with --json, else the human form. */
  emit(data: unknown, human: () => string): void {
    this.io.out(this.json ? JSON.stringify(data, null, 2) : human());
  }

  setJson(o: { json?: boolean }): void {
    this.json = this.json || Boolean(o.json);
  }
}

export const jsonOpt = () => new Option('--json', 'print machine-readable JSON');

/**
 * A command-line argument with a bad value, found by the command itself (exit 2, like commander's
 * own usage errors; with --json its code is commander's "commander.invalidArgument").
 */
export class UsageError extends Error {
  readonly code = 'commander.invalidArgument';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Option parser: a positive integer id (application, token). A bad value is a usage error. */
export function parseId(v: string): number {
  if (!/^\d{1,10}$/.test(v) || Number(v) === 0) throw new InvalidArgumentError("Must be a positive integer id.");
  return Number(v);
}

export function parseChains(v: string): string[] {
  return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
}
