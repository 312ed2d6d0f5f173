import { eitherOf, EVERYONE, tenantsOf, UNCONTAINED, type Viewer } from './audience';

const acme: Viewer = { tenant: 'acme', contained: false };
const beta: Viewer = { tenant: 'beta', contained: false };
const containedAcme: Viewer = { tenant: 'acme', contained: true };

describe('audiences', () => {
  it('admits only the tenants listed, and everyone when there is no list', () => {
    expect([acme, beta, containedAcme].map(tenantsOf(['acme']))).toEqual([true, false, true]);
    expect(tenantsOf(undefined)).toBe(EVERYONE);
  });

  it('admits only callers not contained to what refuses contained ones', () => {
    expect([acme, containedAcme].map(UNCONTAINED)).toEqual([true, false]);
  });

  it('admits whoever either of two admits', () => {
    const either = eitherOf(tenantsOf(['acme']), tenantsOf(['beta']));
    expect([acme, beta, { tenant: 'gamma', contained: false }].map(either)).toEqual([true, true, false]);
    expect(eitherOf(tenantsOf(['acme']), EVERYONE)).toBe(EVERYONE);
  });
});
