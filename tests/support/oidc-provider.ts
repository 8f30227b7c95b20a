// A real OpenID Connect provider on loopback for the sign-in tests: `oidc-provider` from npm,
// with its own login and consent pages (its development interactions: any password is
// accepted for a known login). It listens before it is configured, so its issuer URL can go
// into the service's config.json and the service's callback into its client afterwards.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

export interface Account {
  email: string;
  name: string;
  email_verified?: boolean;
}

export interface RealOidc {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Sign-in attempts the provider's token endpoint answered (successful or not). */
  tokenRequests: number;
  /** Configures the provider with the service's redirect URIs; requests before that get 503. */
  serve(redirectUris: string[]): Promise<void>;
  stop(): Promise<void>;
}

export async function listenOidcProvider(accounts: Record<string, Account>): Promise<RealOidc> {
  let handler: ((req: any, res: any) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith("/token")) op.tokenRequests++;
    if (handler) return handler(req, res);
    res.writeHead(503).end("not configured yet");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const op: RealOidc = {
    issuer,
    clientId: "service",
    clientSecret: "service-client-secret-0123456789",
    tokenRequests: 0,
    async serve(redirectUris) {
      const { privateKey } = await generateKeyPair("RS256", { extractable: true });
      const provider = new Provider(issuer, {
        clients: [{ client_id: op.clientId, client_secret: op.clientSecret, redirect_uris: redirectUris, response_types: ["code"], grant_types: ["authorization_code"] }],
        jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: "test-key", alg: "RS256", use: "sig" }] },
        cookies: { keys: ["test-cookie-key-0123456789"] },
        claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
        pkce: { required: () => true },
        async findAccount(_ctx: unknown, id: string) {
          const account = accounts[id];
          if (!account) return undefined;
          return { accountId: id, claims: async () => ({ sub: id, email: account.email, email_verified: account.email_verified ?? true, name: account.name }) };
        },
      });
      handler = provider.callback();
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return op;
}
