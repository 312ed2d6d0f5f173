import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSupportedNode, OLDEST_SUPPORTED_NODE } from './supported-node';

describe('the Node versions the package runs on', () => {
  it('is what package.json engines says', () => {
    const packageJson = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      engines: { node: string };
    };

    expect(packageJson.engines.node).toBe(`>=${OLDEST_SUPPORTED_NODE}`);
  });

  it.each([
    ['20.20.2', false],
    ['22.18.9', false],
    ['22.19.0', true],
    ['22.23.3', true],
    ['24.0.0', true],
    ['26.1.0', true],
  ])('%s: %s', (version, supported) => {
    expect(isSupportedNode(version)).toBe(supported);
  });
});
