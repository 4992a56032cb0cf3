import { expect } from 'chai';
import { parseUnits, formatUnits, AmountFormatError } from './money';

describe('money: parseUnits / formatUnits', () => {
  it('parses decimal strings into exact base units', () => {
    expect(parseUnits('1', 18)).to.equal(10n ** 18n);
    expect(parseUnits('0.000001', 6)).to.equal(1n);
    expect(parseUnits('12.5', 8)).to.equal(1_250_000_000n);
    expect(parseUnits('123456789012345678901234567890.123456789012345678', 18))
      .to.equal(123456789012345678901234567890123456789012345678n);
    expect(parseUnits('1.10', 1)).to.equal(11n); // trailing zeros beyond precision are exact
    expect(parseUnits('0', 0)).to.equal(0n);
  });

  it('rejects anything that is not a plain decimal, or would round', () => {
    for (const bad of ['', ' 1', '1 ', '-1', '+1', '1e3', '01', '.5', '5.', '0x10', '1,5', 'NaN', '1.2.3']) {
      expect(() => parseUnits(bad, 8), bad).to.throw(AmountFormatError);
    }
    expect(() => parseUnits('0.0000001', 6)).to.throw(AmountFormatError, /more than 6 decimal places/);
    expect(() => parseUnits('1', -1)).to.throw(RangeError);
  });

  it('formats base units as the shortest exact decimal and round-trips', () => {
    expect(formatUnits(0n, 6)).to.equal('0');
    expect(formatUnits(1n, 6)).to.equal('0.000001');
    expect(formatUnits(1_500_000n, 6)).to.equal('1.5');
    expect(formatUnits(10n ** 18n, 18)).to.equal('1');
    expect(formatUnits(-5n, 2)).to.equal('-0.05');
    expect(formatUnits(42n, 0)).to.equal('42');
    for (const v of ['0.1', '99999999999999999999.000000000000000001', '3']) {
      expect(formatUnits(parseUnits(v, 18), 18)).to.equal(v);
    }
  });
});
