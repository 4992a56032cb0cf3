import Redis from 'ioredis';
import type { Grant, SharedBucketStore } from './bucket-store';
import type { BucketPolicy } from './token-bucket';

/**
 * The same bucket arithmetic as PgBucketStore, as one Lua script: Redis runs a script atomically,
 * so processes sharing the Redis never take more than the bucket holds. The script reads Redis's
 * own clock (TIME), like the Postgres statement reads now(), so the API hosts' clocks never
 * matter; an idle bucket expires once it would be full again anyway (at most a day later).
 */
const TAKE = `
local want = tonumber(ARGV[1])
local rps = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local h = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(h[1])
local at = tonumber(h[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
local level = math.min(burst, tokens + math.max(0, now - at) * rps)
local granted = math.min(want, math.floor(level))
level = level - granted
redis.call('HSET', KEYS[1], 'tokens', tostring(level), 'at', tostring(math.max(at, now)))
redis.call('PEXPIRE', KEYS[1], math.min(math.ceil(burst / rps * 1000) + 60000, 86400000))
return { granted, tostring(level) }
`;

type RedisWithTake = Redis & { wcsTakeTokens(key: string, want: number, rps: number, burst: number): Promise<[number, string]> };

export class RedisBucketStore implements SharedBucketStore {
  private readonly redis: RedisWithTake;

  /** `url`: redis:// or rediss:// (credentials in it are never logged). Keys are `<prefix><bucket>`. */
  constructor(url: string, private readonly prefix = 'wcs:rate:') {
    const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: true, maxRetriesPerRequest: 2, connectTimeout: 5000 });
    redis.defineCommand('wcsTakeTokens', { numberOfKeys: 1, lua: TAKE });
    // connection errors surface on the commands that need them (as a 503); no unhandled 'error' events
    redis.on('error', () => undefined);
    this.redis = redis as RedisWithTake;
  }

  async init(): Promise<void> {
    await this.redis.connect();
  }

  async take(bucket: string, want: number, policy: BucketPolicy): Promise<Grant> {
    const [granted, left] = await this.redis.wcsTakeTokens(this.prefix + bucket, want, policy.ratePerSecond, policy.burst);
    return { granted: Number(granted), left: Number(left) };
  }

  async destroy(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
