import { parseQuantity, unitExamples } from '../../config/units.ts';
import { UsageError } from '../args.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../../shared/signing-key.ts';
import type { Command } from '../command.ts';
import { commandConfig } from '../state.ts';

/** About 31 years: far beyond any development token's use, and within a JWT's `exp` everywhere. */
const MAX_TTL_SECONDS = 999_999_999;

export const token: Command = {
  name: 'token',
  summary:
    "Print a development token signed with the install's secret (auth.secretFile, or signing-secret in the data directory, made on first use; the token alone on stdout).",
  flags: [
    { name: 'sub', value: 'SUBJECT', description: 'the sub claim (default "dev")' },
    { name: 'scope', value: 'SCOPES', description: 'space-separated scopes (default "catalog:read")' },
    { name: 'ttl', value: 'DURATION', description: 'lifetime: seconds, or with a unit as config values take them (90s, 30m, 12h, 7d; default 1h)' },
  ],
  async run(args) {
    const config = commandConfig('token', args.config);
    const ttl = String(args.options.ttl ?? '1h');
    const seconds = parseQuantity(ttl, 's');
    if (seconds === undefined || seconds < 1 || seconds > MAX_TTL_SECONDS)
      throw new UsageError(
        `--ttl must be a whole number of seconds from 1 to ${String(MAX_TTL_SECONDS)}, or the same with a unit (${unitExamples('s')}), got "${ttl}"`,
      );
    const jwt = await mintToken(loadOrCreateSecret(secretPath(config)), {
      subject: String(args.options.sub ?? 'dev'),
      scope: String(args.options.scope ?? config['auth.requiredScope']),
      ttlSeconds: seconds,
      issuer: config['auth.issuer'],
      audience: config['auth.audience'],
    });
    process.stdout.write(`${jwt}\n`);
  },
};
