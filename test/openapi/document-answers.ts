import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import type { OpenApiDocument } from '../../src/openapi';
import type { Response } from '../support/http-client';

type Json = Record<string, any>;

/** Where `#/...` refs of the document point once its components are one ajv schema. */
const DOCUMENT_ID = 'openapi-document';

/**
 * Checks answers against the document: the schema of a route's answer for a status (or its
 * `default`) and media type, compiled by ajv with the document's components.
 */
export class DocumentAnswers {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenApiDocument) {
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: document.components });
  }

  /** The problems of `response` against the schema of `method path` (a template: `/v1/tools/{toolId}/invoke`). */
  problems(method: string, path: string, response: Response): string[] {
    const operation = this.document.paths[path]?.[method.toLowerCase()] as Json | undefined;
    if (!operation) return [`${method} ${path} is not in the document`];
    const answer = this.resolve(operation.responses[String(response.status)] ?? operation.responses.default);
    const mediaType = String(response.headers['content-type'] ?? '').split(';')[0];
    const media = answer.content?.[mediaType];
    if (!media) return [`${method} ${path} ${response.status} has no ${mediaType} answer in the document`];
    const key = `${method} ${path} ${response.status} ${mediaType}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(this.rebased(media.schema));
      this.compiled.set(key, validate);
    }
    return validate(response.body) ? [] : describe(validate);
  }

  /** The problems of `value` against the document's component schema `name`. */
  componentProblems(name: string, value: unknown): string[] {
    const key = `component ${name}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#/components/schemas/${name}` });
      this.compiled.set(key, validate);
    }
    return validate(value) ? [] : describe(validate);
  }

  private resolve(answer: Json): Json {
    const ref = answer.$ref as string | undefined;
    if (!ref) return answer;
    return ref
      .split('/')
      .slice(1)
      .reduce((node: Json, part) => node[part], this.document as Json);
  }

  /** The schema with its `#/components/...` refs pointing into the document's components. */
  private rebased(schema: Json): Json {
    return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOCUMENT_ID}#/components/`));
  }
}

function describe(validate: ValidateFunction): string[] {
  return (validate.errors ?? []).map(
    (error) => `${error.instancePath || '(body)'} ${error.message} ${JSON.stringify(error.params)}`,
  );
}

/**
 * `METHOD /path` of every route in Fastify's `printRoutes({ commonPrefix: false })` (HEAD, which
 * Fastify adds to each GET, left out). A nested line holds the rest of its parent's path.
 */
export function servedRoutes(printed: string): string[] {
  const routes: string[] = [];
  const parents: string[] = [];
  for (const line of printed.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1].length / 4;
    const path = (parents[depth - 1] ?? '') + match[2];
    parents[depth] = path;
    parents.length = depth + 1;
    for (const method of match[3]?.split(', ') ?? []) if (method !== 'HEAD') routes.push(`${method} ${path}`);
  }
  return routes.sort();
}

/** `METHOD /path` of every operation of the document, with Fastify's `:param` for `{param}`. */
export function documentedRoutes(document: OpenApiDocument): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    )
    .sort();
}
