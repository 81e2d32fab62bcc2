export type World = 'admission' | 'authenticator' | 'authorizer' | 'strategy' | 'converter';
export const WIT_PATH: string;
export const HOST_IMPORT: 'capstan:plugin/host@0.1.0';
export function entrySource(policyPath: string, world: World): string;
export function bundle(policyPath: string, world: World): Promise<string>;
/** The build tools a policy project pins as devDependencies, name → exact version. */
export function pinnedTools(): Record<string, string>;
export const NODE_MAJOR: number;
/** Why this node (default: the running one) cannot run the build, with where to get a newer one; null when it can. */
export function nodeTooOld(version?: string): string | null;
export function importFrom(fromDir: string, name: string): Promise<any>;
export function build(options: { entry: string; out: string; world?: World; witPath?: string }): Promise<{ bytes: number; seconds: number }>;
