import { createHash, createHmac } from 'node:crypto';
import type { ToolDefinition } from './tool';
import { ToolCallAudit } from './tool-call-audit';

const tool = (audit?: boolean) =>
  ({ id: 't', kind: 'http', upstream: 'https://api.example.com', audit }) as unknown as ToolDefinition;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('ToolCallAudit', () => {
  it('audits by the tool’s own switch first, then audit.toolCalls', () => {
    const byDefault = new ToolCallAudit();
    const everyTool = new ToolCallAudit({ toolCalls: true });

    expect(byDefault.of(tool(), {})).toBeUndefined();
    expect(byDefault.of(tool(true), {})).toBeDefined();
    expect(everyTool.of(tool(), {})).toBeDefined();
    expect(everyTool.of(tool(false), {})).toBeUndefined();
  });

  it('digests the arguments’ canonical JSON: the same in any key order, keyed when there is a key', () => {
    const audit = new ToolCallAudit({ toolCalls: true });
    const keyed = new ToolCallAudit({ toolCalls: true, argumentsKey: 'k'.repeat(16) });

    const first = audit.of(tool(), { b: [1, { d: 1, c: 2 }], a: 'x' })!;
    const reordered = audit.of(tool(), { a: 'x', b: [1, { c: 2, d: 1 }] })!;

    expect(first).toEqual({
      toolKind: 'http',
      upstream: 'https://api.example.com',
      argumentsDigest: sha256('{"a":"x","b":[1,{"c":2,"d":1}]}'),
    });
    expect(reordered.argumentsDigest).toBe(first.argumentsDigest);
    expect(keyed.of(tool(), { a: 'x' })!.argumentsDigest).toBe(
      createHmac('sha256', 'k'.repeat(16)).update('{"a":"x"}').digest('hex'),
    );
    // An empty key (an unset `${BULKHEAD_AUDIT_KEY:-}`) is no key.
    expect(new ToolCallAudit({ toolCalls: true, argumentsKey: '' }).of(tool(), { a: 'x' })!.argumentsDigest).toBe(
      sha256('{"a":"x"}'),
    );
  });

  it('digests arguments that have no JSON (a company’s own circular value) as a mark, not a failure', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;

    expect(new ToolCallAudit({ toolCalls: true }).of(tool(), circular)!.argumentsDigest).toBe(sha256('(not JSON)'));
  });
});
