import { PriorityPolicy } from './priority-policy';

describe('PriorityPolicy', () => {
  const policy = new PriorityPolicy({ ceiling: 'standard', tenants: { ops: 'critical', batch: 'sheddable' } });

  it('takes the default class when the caller asks for none', () => {
    expect(policy.classOf('sheddable', undefined, 'acme')).toBe('sheddable');
    // A tool's own class is the operator's: it is not held to the caller's ceiling.
    expect(policy.classOf('critical', undefined, 'batch')).toBe('critical');
  });

  it('lets a caller ask for less, and never more than its tenant’s ceiling', () => {
    expect(policy.classOf('standard', 'sheddable', 'acme')).toBe('sheddable');
    expect(policy.classOf('standard', 'critical', 'acme')).toBe('standard');
    expect(policy.classOf('standard', 'critical', 'ops')).toBe('critical');
    expect(policy.classOf('critical', 'standard', 'batch')).toBe('sheddable');
  });

  it('holds everyone to standard when nothing is configured', () => {
    expect(new PriorityPolicy().classOf('standard', 'critical', 'acme')).toBe('standard');
  });

  it.each([['urgent'], ['CRITICAL'], [''], [['critical', 'critical']]])('refuses %j as no class', (header) => {
    expect(() => policy.classOf('standard', header, 'acme')).toThrow(
      'X-Bulkhead-Priority must be critical, standard or sheddable',
    );
  });
});
