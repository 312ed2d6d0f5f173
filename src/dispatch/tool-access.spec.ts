import { ToolAccess, ToolAccessRule } from './tool-access';

describe('ToolAccess', () => {
  it('lets every tenant call every tool when nothing is said', () => {
    const access = new ToolAccess();

    expect(access.allows('acme', 'crm.lookup')).toBe(true);
    expect(access.allows('anonymous', 'echo')).toBe(true);
  });

  it('matches whole ids, `*` any run (dots too), `?` one character, everything else as written', () => {
    const rule = new ToolAccessRule({ allow: ['crm.*', 'echo?', 'a-b'] });

    expect(rule.allows('crm.lookup')).toBe(true);
    expect(rule.allows('crm.contacts.delete')).toBe(true);
    expect(rule.allows('crm')).toBe(false);
    expect(rule.allows('xcrm.lookup')).toBe(false);
    expect(rule.allows('echo2')).toBe(true);
    expect(rule.allows('echo')).toBe(false);
    expect(rule.allows('echo22')).toBe(false);
    expect(rule.allows('a-b')).toBe(true);
    // A dot is a dot, not any character.
    expect(new ToolAccessRule({ allow: ['crm.lookup'] }).allows('crmXlookup')).toBe(false);
  });

  it('refuses what a deny pattern matches, whatever allows it', () => {
    const rule = new ToolAccessRule({ allow: ['crm.*'], deny: ['crm.delete_*'] });

    expect(rule.allows('crm.lookup')).toBe(true);
    expect(rule.allows('crm.delete_contact')).toBe(false);
  });

  it('holds a tenant to its own rule in place of the default, not on top of it', () => {
    const access = new ToolAccess({
      default: { deny: ['admin.*'] },
      tenants: { ops: { allow: ['admin.*'] }, acme: { allow: ['echo'] } },
    });

    expect(access.allows('globex', 'echo')).toBe(true);
    expect(access.allows('globex', 'admin.restart')).toBe(false);
    expect(access.allows('ops', 'admin.restart')).toBe(true);
    expect(access.allows('ops', 'echo')).toBe(false);
    expect(access.allows('acme', 'crm.lookup')).toBe(false);
    // One rule object per rule: what is listed by rule is shared by its tenants.
    expect(access.ruleOf('globex')).toBe(access.ruleOf('initech'));
    expect(access.ruleOf('ops')).not.toBe(access.ruleOf('globex'));
  });
});
