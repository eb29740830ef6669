import { UsageError } from '../args.ts';
import { loadOrCreateSecret, mintToken, secretPath } from '../../shared/signing-key.ts';
import type { Command } from '../command.ts';
import { commandConfig } from '../state.ts';

export const token: Command = {
  name: 'token',
  summary: 'Print a development token signed with the install\'s secret (auth.secretFile, or signing-secret in the data directory, made on first use; the token alone on stdout).',
  flags: [
    { name: 'sub', value: 'SUBJECT', description: 'the sub claim (default "dev")' },
    { name: 'scope', value: 'SCOPES', description: 'space-separated scopes (default "catalog:read")' },
    { name: 'ttl', value: 'SECONDS', description: 'lifetime in seconds (default 3600)' },
  ],
  async run(args) {
    const config = commandConfig('token', args.config);
    const ttl = String(args.options.ttl ?? '3600');
    if (!/^[1-9][0-9]{0,8}$/.test(ttl)) throw new UsageError(`--ttl must be a positive whole number of seconds, got "${ttl}"`);
    const jwt = await mintToken(loadOrCreateSecret(secretPath(config)), {
      subject: String(args.options.sub ?? 'dev'),
      scope: String(args.options.scope ?? config['auth.requiredScope']),
      ttlSeconds: Number(ttl),
      issuer: config['auth.issuer'],
      audience: config['auth.audience'],
    });
    process.stdout.write(`${jwt}\n`);
  },
};
