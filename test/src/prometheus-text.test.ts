import { expect } from 'chai';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ExpositionError, parseExposition, Scrape } from './support/prometheus-text';

describe('support: the strict Prometheus text-format reader used by the metrics e2e', () => {
  it('reads prom-client output: labels with escapes, counters, gauges (NaN, floats), labelled histograms, default metrics', async () => {
    const r = new Registry();
    collectDefaultMetrics({ register: r, prefix: 'x_' });
    new Counter({ name: 'x_c_total', help: 'a "help" \\ line', labelNames: ['k'], registers: [r] }).inc({ k: 'a"b\\c\nd,e=}' }, 2);
    const g = new Gauge({ name: 'x_g', help: 'g', labelNames: ['k'], registers: [r] });
    g.set({ k: 'nan' }, NaN);
    g.set({ k: 'big' }, 1.5e21);
    const h = new Histogram({ name: 'x_h_seconds', help: 'h', labelNames: ['route'], buckets: [0.1, 1], registers: [r] });
    h.observe({ route: '/a' }, 0.5);
    h.observe({ route: '/a' }, 5);
    h.observe({ route: '/b' }, 0.05);
    const s = Scrape.parse(await r.metrics());
    expect(s.family('x_c_total')).to.include({ type: 'counter', help: 'a "help" \\ line' });
    expect(s.value('x_c_total', { k: 'a"b\\c\nd,e=}' })).to.equal(2);
    expect(s.value('x_g', { k: 'nan' })).to.be.NaN;
    expect(s.value('x_g', { k: 'big' })).to.equal(1.5e21);
    expect(s.histogram('x_h_seconds', { route: '/a' })).to.deep.equal({ count: 2, sum: 5.5 });
    expect(s.histogram('x_h_seconds', { route: '/b' })).to.deep.equal({ count: 1, sum: 0.05 });
    expect(s.value('x_h_seconds', { route: '/a', le: '1' }, 'x_h_seconds_bucket')).to.equal(1);
    expect(s.family('x_process_cpu_user_seconds_total').type).to.equal('counter');
  });

  it('refuses malformed expositions', () => {
    const bad = [
      'x{a="1"} one',
      'x{a=1} 1',
      'x{a="1",a="2"} 1',
      'x{a="\\t"} 1',
      '1x 1',
      'x 1 2 3',
      '# TYPE x gauge\nx 1\n# TYPE x gauge',
      '# TYPE x gauge\n# HELP x a\n# HELP x b\nx 1',
      '# TYPE x gauge\nx 1\n# TYPE y gauge\ny 1\nx 2',
      '# TYPE x blob\nx 1',
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1',
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1',
      '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1',
      '# TYPE h histogram\nh 1',
    ];
    for (const text of bad) expect(() => parseExposition(text), text).to.throw(ExpositionError);
  });
});
