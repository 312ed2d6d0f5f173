import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerFrameworkError } from './framework-errors';

interface Sent {
  status?: number;
  type?: string;
  body?: unknown;
}

function fakeReply(sent = false): { reply: FastifyReply; answer: Sent } {
  const answer: Sent = {};
  const reply = {
    sent,
    raw: { headersSent: sent },
    status(code: number) {
      answer.status = code;
      return this;
    },
    type(type: string) {
      answer.type = type;
      return this;
    },
    send(body: unknown) {
      answer.body = body;
      return this;
    },
  };
  return { reply: reply as unknown as FastifyReply, answer };
}

const request = {} as FastifyRequest;

describe('answerFrameworkError', () => {
  it.each([
    ['FST_ERR_BAD_URL', 400, 'invalid_request', 'the URL is malformed'],
    ['FST_ERR_MAX_PARAM_LENGTH', 400, 'invalid_request', 'a path segment is longer than the limit'],
    ['FST_ERR_ASYNC_CONSTRAINT', 500, 'internal', 'internal error'],
  ])('answers %s with %d %s', (code, status, kind, message) => {
    const { reply, answer } = fakeReply();

    answerFrameworkError({ code }, request, reply);

    expect(answer).toEqual({
      status,
      type: 'application/json; charset=utf-8',
      body: { error: { kind, message, attempts: 0, jsonrpcCode: expect.any(Number) } },
    });
  });

  it('writes nothing when a response is already sent', () => {
    const { reply, answer } = fakeReply(true);

    answerFrameworkError({ code: 'FST_ERR_BAD_URL' }, request, reply);

    expect(answer).toEqual({});
  });
});
