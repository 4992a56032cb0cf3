import { expect } from 'chai';
import { Batcher } from './batcher';

const tick = () => new Promise((r) => setImmediate(r));

describe('Batcher: group commit', () => {
  it('hands items of one tick to one run, answers each with its own result, in order', async () => {
    const batches: number[][] = [];
    const b = new Batcher<number, string>(async (xs) => {
      batches.push(xs);
      return xs.map((x) => `r${x}`);
    }, { maxBatch: 100, maxInFlight: 1 });
    const out = await Promise.all([1, 2, 3].map((x) => b.submit(x)));
    expect(out).to.deep.equal(['r1', 'r2', 'r3']);
    expect(batches).to.deep.equal([[1, 2, 3]]);
  });

  it('while maxInFlight runs are busy, new items wait and go out together; maxBatch splits', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let running = 0;
    let most = 0;
    const b = new Batcher<number, number>(async (xs) => {
      running++;
      most = Math.max(most, running);
      batches.push(xs);
      await gate;
      running--;
      return xs;
    }, { maxBatch: 3, maxInFlight: 1 });
    const first = b.submit(0);
    await tick();
    const rest = [1, 2, 3, 4, 5].map((x) => b.submit(x));
    await tick();
    expect(b.waiting).to.equal(5);
    release();
    expect(await Promise.all([first, ...rest])).to.deep.equal([0, 1, 2, 3, 4, 5]);
    expect(batches).to.deep.equal([[0], [1, 2, 3], [4, 5]]);
    expect(most).to.equal(1);
  });

  it('a failed run rejects its own batch only; a wrong number of results is a fault', async () => {
    const b = new Batcher<number, number>(async (xs) => {
      if (xs.includes(13)) throw new Error('unlucky');
      if (xs.includes(7)) return [];
      return xs;
    }, { maxBatch: 1, maxInFlight: 4 });
    const results = await Promise.allSettled([b.submit(1), b.submit(13), b.submit(7), b.submit(2)]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).to.equal('unlucky');
    expect((results[2] as PromiseRejectedResult).reason.message).to.match(/0 results for 1 items/);
  });

  it('refuses nonsense limits', () => {
    expect(() => new Batcher(async (x: number[]) => x, { maxBatch: 0, maxInFlight: 1 })).to.throw(RangeError);
  });
});
