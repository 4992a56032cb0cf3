import { expect } from 'chai';
import { ACTIONS, fourEyes, may, type Action } from './permissions';
import { ROLES } from './operators';

describe('roles and four eyes (pure)', () => {
  it('every role reads; each change belongs to its role only; a viewer changes nothing', () => {
    for (const r of ROLES) expect(may(r, 'read'), r).to.equal(true);
    const changes = (Object.keys(ACTIONS) as Action[]).filter((a) => a !== 'read');
    expect(changes.filter((a) => may('viewer', a))).to.deep.equal([]);
    expect(changes.filter((a) => may('admin', a))).to.deep.equal(['operators.write']);
    expect(changes.filter((a) => may('approver', a))).to.deep.equal(['alerts.acknowledge', 'withdrawals.decide', 'collection.decide']);
    expect(may('operator', 'withdrawals.decide')).to.equal(false);
    expect(may('operator', 'operators.write')).to.equal(false);
    expect(may('operator', 'callbacks.resend')).to.equal(true);
  });

  it('four eyes: whoever last changed the holding rule cannot decide the order; anyone else can', () => {
    expect(fourEyes({ decider: 'alice', ruleChangedBy: 'alice' })).to.match(/another approver/);
    expect(fourEyes({ decider: 'alice', ruleChangedBy: 'bob' })).to.equal(null);
    expect(fourEyes({ decider: 'alice', ruleChangedBy: 'cli:alice' }), 'a shell user is not a console operator').to.equal(null);
    expect(fourEyes({ decider: 'alice', ruleChangedBy: null })).to.equal(null);
  });
});
