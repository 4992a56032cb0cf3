import { expect } from 'chai';
import { formatLocalDateTime, parseLocalDateTime } from './time';

describe('time: ISO local date-time', () => {
  it('formats without zone or milliseconds (UTC)', () => {
    expect(formatLocalDateTime(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)))).to.equal('2026-01-02T03:04:05');
    expect(formatLocalDateTime(null)).to.equal(null);
  });
  it('parses exactly YYYY-MM-DDThh:mm:ss and rejects impossible dates', () => {
    expect(parseLocalDateTime('2026-01-02T03:04:05')!.getTime()).to.equal(Date.UTC(2026, 0, 2, 3, 4, 5));
    for (const bad of ['2026-02-30T00:00:00', '2026-01-02 03:04:05', '2026-01-02T03:04:05Z', '2026-1-2T3:4:5', '', '2026-01-02T24:00:00']) {
      expect(parseLocalDateTime(bad), bad).to.equal(null);
    }
  });
});
