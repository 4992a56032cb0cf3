import { expect } from 'chai';
import { pacedRoom, slotDelays, PACED_HORIZON_S } from './pacing';

describe('callback pacing (pure)', () => {
  it('claims a horizon of slots, at least one, less what is held, within the cap', () => {
    expect(PACED_HORIZON_S).to.equal(1);
    expect(pacedRoom(5, 0, 32)).to.equal(5);
    expect(pacedRoom(5, 3, 32)).to.equal(2);
    expect(pacedRoom(5, 7, 32)).to.equal(0);
    expect(pacedRoom(1, 0, 32)).to.equal(1);
    expect(pacedRoom(1, 1, 32)).to.equal(0);
    expect(pacedRoom(1000, 0, 32)).to.equal(32);
    expect(pacedRoom(1000, 40, 32)).to.equal(0);
  });

  it('spaces slots 1/r apart from the first free one, never before now', () => {
    expect(slotDelays(0, 3, 4)).to.deep.equal([0, 250, 500]);
    expect(slotDelays(-900, 2, 2)).to.deep.equal([0, 500]);
    expect(slotDelays(1200, 2, 1)).to.deep.equal([1200, 2200]);
    expect(slotDelays(0, 0, 1)).to.deep.equal([]);
  });
});
