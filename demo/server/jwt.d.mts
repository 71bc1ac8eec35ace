// Types for jwt.mjs (the TypeScript tests import it to make an expired token).
export function mintJwt(key: string, ttlS: number, claims?: Record<string, unknown>): string;
export function verifyJwt(key: string, jwt: string): boolean;
