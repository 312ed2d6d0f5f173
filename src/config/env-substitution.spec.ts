import { type Environment, type SubstitutionReport, substituteEnv } from './env-substitution';

/** Runs the substitution and returns both the result and the problems it reported. */
function substitute(document: unknown, env: Environment) {
  const report: SubstitutionReport = { problems: [], failed: new Set(), unset: new Map() };
  const value = substituteEnv(document, env, report);
  return { value, problems: report.problems };
}

describe('substituteEnv', () => {
  describe('a value that is exactly one ${VAR}', () => {
    it('replaces it with the variable', () => {
      expect(substitute({ auth: { adminToken: '${TOKEN}' } }, { TOKEN: 'secret' })).toEqual({
        value: { auth: { adminToken: 'secret' } },
        problems: [],
      });
    });

    it('keeps the replacement a string, leaving numbers to the schema', () => {
      expect(substitute({ concurrency: '${C}' }, { C: '4' }).value).toEqual({ concurrency: '4' });
    });

    it('removes the key when the variable is unset', () => {
      expect(substitute({ auth: { allowAnonymous: true, adminToken: '${TOKEN}' } }, {})).toEqual({
        value: { auth: { allowAnonymous: true } },
        problems: [],
      });
    });

    it('removes the key when the variable is empty', () => {
      const { value } = substitute({ auth: { adminToken: '${TOKEN}' } }, { TOKEN: '' });

      expect(value).toEqual({ auth: {} });
      expect(Object.hasOwn((value as { auth: object }).auth, 'adminToken')).toBe(false);
    });

    it('removes a list item whose variable is unset', () => {
      expect(substitute({ allowHosts: ['a.example', '${EXTRA_HOST}', 'b.example'] }, {}).value).toEqual({
        allowHosts: ['a.example', 'b.example'],
      });
    });

    it('uses the default when the variable is unset', () => {
      expect(substitute({ port: '${APP_PORT:-3000}' }, {}).value).toEqual({ port: '3000' });
    });

    it('uses the default when the variable is empty', () => {
      expect(substitute({ port: '${APP_PORT:-3000}' }, { APP_PORT: '' }).value).toEqual({ port: '3000' });
    });

    it('prefers the variable to the default when it is set', () => {
      expect(substitute({ port: '${APP_PORT:-3000}' }, { APP_PORT: '8080' }).value).toEqual({ port: '8080' });
    });

    it('removes the key when the variable is unset and the default is empty', () => {
      expect(substitute({ adminToken: '${TOKEN:-}' }, {}).value).toEqual({});
    });
  });

  describe('a ${VAR} inside a longer string', () => {
    it('replaces it in place', () => {
      expect(substitute({ url: 'http://${HOST}:9000/render' }, { HOST: 'renderer' })).toEqual({
        value: { url: 'http://renderer:9000/render' },
        problems: [],
      });
    });

    it('replaces every variable in the string', () => {
      expect(substitute({ url: 'http://${HOST}:${PORT}/' }, { HOST: 'h', PORT: '9000' }).value).toEqual({
        url: 'http://h:9000/',
      });
    });

    it('uses the default when the variable is unset', () => {
      expect(substitute({ url: 'http://${HOST:-localhost}:9000/' }, {})).toEqual({
        value: { url: 'http://localhost:9000/' },
        problems: [],
      });
    });

    it('reports an unset variable with the key path', () => {
      expect(substitute({ tools: { render: { url: 'http://${RENDER_HOST}:9000/' } } }, {}).problems).toEqual([
        'tools.render.url: environment variable RENDER_HOST is not set',
      ]);
    });

    it('reports an unset variable in a list with the item index in the path', () => {
      expect(substitute({ egress: { allowHosts: ['a.example', '*.${DOMAIN}'] } }, {}).problems).toEqual([
        'egress.allowHosts.1: environment variable DOMAIN is not set',
      ]);
    });

    it('reports each unset variable on its own line', () => {
      expect(substitute({ url: 'http://${HOST}:9000/', prefix: 'bh-${ZONE}:' }, {}).problems).toEqual([
        'url: environment variable HOST is not set',
        'prefix: environment variable ZONE is not set',
      ]);
    });

    it('names the root when the whole document is such a string', () => {
      expect(substitute('x-${MISSING}', {}).problems).toEqual(['(root): environment variable MISSING is not set']);
    });
  });

  describe('$${', () => {
    it('stands for a literal ${ inside a string', () => {
      expect(substitute({ description: 'costs $${PRICE} per call' }, { PRICE: '1' })).toEqual({
        value: { description: 'costs ${PRICE} per call' },
        problems: [],
      });
    });

    it('stands for a literal ${ as the whole value, without removing the key', () => {
      expect(substitute({ description: '$${UNSET}' }, {})).toEqual({
        value: { description: '${UNSET}' },
        problems: [],
      });
    });

    it('keeps a literal ${VAR:-default} intact', () => {
      expect(substitute({ description: 'use $${X:-y}' }, { X: 'no' }).value).toEqual({ description: 'use ${X:-y}' });
    });
  });

  describe('YAML structure', () => {
    it('keeps a value containing ": " and newlines a single string', () => {
      const injected = 'a: b\nlanes: {}\n- item';

      expect(substitute({ description: '${D}' }, { D: injected }).value).toEqual({ description: injected });
      expect(substitute({ description: 'x ${D}' }, { D: injected }).value).toEqual({ description: `x ${injected}` });
    });

    it('does not expand a ${VAR} that comes from a variable value', () => {
      const env = { OUTER: '${INNER}', INNER: 'expanded' };

      expect(substitute({ whole: '${OUTER}', inside: 'x ${OUTER}' }, env).value).toEqual({
        whole: '${INNER}',
        inside: 'x ${INNER}',
      });
    });

    it('leaves numbers, booleans and null as they are', () => {
      const document = { port: 3000, enabled: true, ratio: 0.5, nothing: null, list: [1, false] };

      expect(substitute(document, {})).toEqual({ value: document, problems: [] });
    });

    it('does not modify the document it is given', () => {
      const document = { auth: { adminToken: '${TOKEN}' }, hosts: ['${HOST}'] };

      substitute(document, { TOKEN: 'secret', HOST: 'h' });

      expect(document).toEqual({ auth: { adminToken: '${TOKEN}' }, hosts: ['${HOST}'] });
    });
  });
});
