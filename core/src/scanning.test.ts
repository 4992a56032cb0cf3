import { expect } from 'chai';
import { servesChainEvents, type BlockScanner, type HistoryScanner } from './index';

describe('scanning: which scanners serve chain events', () => {
  const history: HistoryScanner = { kind: 'history', tipHeight: async () => 1n, transfersSince: async (_a, cursor) => ({ transfers: [], cursor }) };
  const blocks = { kind: 'blocks' } as BlockScanner;

  it('every block scanner; a history scanner only with head cursors (it then also reads outgoing transfers)', () => {
    expect(servesChainEvents(blocks)).to.equal(true);
    expect(servesChainEvents(history)).to.equal(false);
    expect(servesChainEvents({ ...history, headCursor: async () => '0' })).to.equal(true);
  });
});
