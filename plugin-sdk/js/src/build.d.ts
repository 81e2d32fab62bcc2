export type World = 'admission' | 'authenticator' | 'authorizer' | 'strategy' | 'converter';
export const WIT_PATH: string;
export const HOST_IMPORT: 'capstan:plugin/host@0.1.0';
export function entrySource(policyPath: string, world: World): string;
export function bundle(policyPath: string, world: World): Promise<string>;
export function importFrom(fromDir: string, name: string): Promise<any>;
export function build(options: { entry: string; out: string; world?: World; witPath?: string }): Promise<{ bytes: number; seconds: number }>;
