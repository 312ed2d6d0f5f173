import { tenantsOf, UNCONTAINED, type Viewer } from '../common';
import { FakeClock } from '../common/fake-clock';
import { BreakerRegistry } from './breaker-registry.service';

const acme: Viewer = { tenant: 'acme', contained: false };
const beta: Viewer = { tenant: 'beta', contained: false };
const anonymous: Viewer = { tenant: 'anonymous', contained: true };

describe('BreakerRegistry views', () => {
  let breakers: BreakerRegistry;

  beforeEach(() => {
    breakers = new BreakerRegistry({ breakers: { 'billing-api': {} } }, new FakeClock());
    breakers.register('search');
    breakers.register('vault', undefined, UNCONTAINED);
    breakers.register('llm.solo.0', undefined, tenantsOf(['acme']));
  });

  afterEach(() => breakers.onApplicationShutdown());

  const seenBy = (viewer: Viewer) => Object.keys(breakers.snapshotFor(viewer)).sort();

  it('shows a tenant the breakers of what it may use, and the operators every breaker', () => {
    expect(seenBy(acme)).toEqual(['billing-api', 'llm.solo.0', 'search', 'vault']);
    expect(seenBy(beta)).toEqual(['billing-api', 'search', 'vault']);
    expect(seenBy(anonymous)).toEqual(['billing-api', 'search']);
    expect(Object.keys(breakers.snapshot()).sort()).toEqual(['billing-api', 'llm.solo.0', 'search', 'vault']);
  });

  it('shows a breaker registered twice to the audiences of both', () => {
    breakers.register('llm.solo.0', undefined, tenantsOf(['beta']));

    expect(seenBy(beta)).toContain('llm.solo.0');
    expect(seenBy(anonymous)).not.toContain('llm.solo.0');
    expect(breakers.audienceOf('llm.solo.0')(acme)).toBe(true);
  });

  it('gives a breaker of the config that nothing registered to everyone', () => {
    expect(breakers.audienceOf('billing-api')(anonymous)).toBe(true);
  });
});
