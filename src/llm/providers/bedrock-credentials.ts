import type { ProviderTarget } from './llm-provider';
import { missingCredentialsError } from './provider-errors';

/** Environment variables by name, as `process.env` holds them. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** What one Bedrock request is signed with. */
export interface AwsSigningMaterial {
  readonly accessKeyId: string;
  /** Never logged, never in an error, event or metric. */
  readonly secretAccessKey: string;
  /** Temporary credentials only; never logged, never in an error, event or metric. */
  readonly sessionToken?: string;
  /** Part of the signature's scope, and of Bedrock's default host. */
  readonly region: string;
}

/** The region names the config schema accepts; the environment's are held to the same. */
const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;

/**
 * The keys and region a `bedrock` target signs with, from the standard AWS environment variables:
 * `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, optional `AWS_SESSION_TOKEN`; the region from the
 * target, else `AWS_REGION`, else `AWS_DEFAULT_REGION`. An empty variable counts as unset (what
 * `${VAR:-}` leaves). Anything missing is a `missing_credentials` failure naming the variables,
 * never a value.
 */
export function awsSigningMaterial(target: ProviderTarget, env: Environment): AwsSigningMaterial {
  const accessKeyId = env.AWS_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY || undefined;
  if (!accessKeyId || !secretAccessKey) {
    const missing = [
      accessKeyId ? undefined : 'AWS_ACCESS_KEY_ID',
      secretAccessKey ? undefined : 'AWS_SECRET_ACCESS_KEY',
    ];
    const names = missing.filter((name) => name !== undefined);
    throw missingCredentialsError(target, `${names.join(' and ')} ${names.length > 1 ? 'are' : 'is'} not set`);
  }
  const region = targetRegion(target, env);
  const sessionToken = env.AWS_SESSION_TOKEN || undefined;
  return { accessKeyId, secretAccessKey, region, ...(sessionToken ? { sessionToken } : {}) };
}

function targetRegion(target: ProviderTarget, env: Environment): string {
  if (target.region) return target.region;
  const variable = env.AWS_REGION ? 'AWS_REGION' : env.AWS_DEFAULT_REGION ? 'AWS_DEFAULT_REGION' : undefined;
  if (!variable) {
    throw missingCredentialsError(
      target,
      'no region: the target has none, and AWS_REGION and AWS_DEFAULT_REGION are not set',
    );
  }
  const region = env[variable] as string;
  // The region becomes part of a host name: a stray value must not pick where requests go.
  if (!AWS_REGION.test(region)) throw missingCredentialsError(target, `${variable} is not an AWS region`);
  return region;
}
