// Typings of @capstan/plugin-sdk (hand-written; the JS is the source).

/** A Kubernetes object as JSON. */
export type KubeObject = { apiVersion?: string; kind?: string; metadata?: ObjectMeta; [key: string]: unknown };
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

export interface GroupVersionKind { group: string; version: string; kind: string }
export interface GroupVersionResource { group: string; version: string; resource: string }
export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
export interface UserInfo { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }

/** `AdmissionReview.request` (admission.k8s.io/v1). */
export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object?: KubeObject;
  oldObject?: KubeObject;
  dryRun?: boolean;
  options?: KubeObject;
}

/** The AdmissionReview envelope the host sends (with `request`) and expects back (with `response`). */
export interface AdmissionReview {
  apiVersion?: string;
  kind?: string;
  request?: AdmissionRequest;
  response?: ReturnType<AdmissionResponse['toJSON']>;
}

export interface StatusCause { reason?: string; message?: string; field?: string }
export interface StatusDetails { name?: string; group?: string; kind?: string; causes?: StatusCause[] }
/** A metav1.Status as carried in an admission response. */
export interface Status { status: 'Failure'; message: string; reason: string; code: number; details?: StatusDetails }

export type PatchOp =
  | { op: 'add'; path: string; value: unknown }
  | { op: 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** `AdmissionReview.response`, built with chainable methods. */
export class AdmissionResponse {
  allowed: boolean;
  status?: Status;
  uid?: string;
  patchOps: PatchOp[];
  warnings: string[];
  auditAnnotations: Record<string, string>;
  static allow(): AdmissionResponse;
  static deny(code: number, reason: string, message: string): AdmissionResponse;
  /** kube's `admission.NewForbidden`: 403, `<resource> "<name>" is forbidden: <message>`. */
  static forbidden(request: AdmissionRequest, message: string): AdmissionResponse;
  /** kube's `apierrors.NewNotFound`: 404, `<resource> "<name>" not found`. */
  static notFound(group: string, resource: string, name: string): AdmissionResponse;
  withDetails(details: StatusDetails): this;
  withCause(type: string, field: string, message: string): this;
  withPatch(ops: PatchOp[] | JsonPatch): this;
  /** The JSON Patch that turns `before` into `after`. */
  withChanges(before: unknown, after: unknown): this;
  withWarning(warning: string): this;
  withAuditAnnotation(key: string, value: string): this;
  readonly message: string;
  readonly code: number;
  toJSON(): {
    uid: string;
    allowed: boolean;
    status?: Status;
    patch?: string;
    patchType?: 'JSONPatch';
    auditAnnotations?: Record<string, string>;
    warnings?: string[];
  };
}

export function allow(): AdmissionResponse;
export function deny(code: number, reason: string, message: string): AdmissionResponse;
export function forbidden(request: AdmissionRequest, message: string): AdmissionResponse;
export function notFound(group: string, resource: string, name: string): AdmissionResponse;

export class JsonPatch {
  ops: PatchOp[];
  add(path: string[], value: unknown): this;
  replace(path: string[], value: unknown): this;
  remove(path: string[]): this;
  isEmpty(): boolean;
}
export function diff(before: unknown, after: unknown): PatchOp[];
export function escape(token: string): string;
export function pointer(segments: string[]): string;

export function groupResource(group: string, resource: string): string;
export function subresource(request: AdmissionRequest): string;
export function isWrite(request: AdmissionRequest): boolean;
export function isResource(request: AdmissionRequest, group: string, resource: string): boolean;
export function writtenObject(request: AdmissionRequest, group?: string, resource?: string): KubeObject | undefined;
export function objectName(request: AdmissionRequest): string;

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';
export const Level: { readonly Trace: 'trace'; readonly Debug: 'debug'; readonly Info: 'info'; readonly Warn: 'warn'; readonly Error: 'error' };
export function log(level: LogLevel, message: string): void;
export function config<T = Record<string, unknown>>(): T;
export function getObject(apiVersion: string, resource: string, namespace: string | null | undefined, name: string): KubeObject | null;
export function listObjects(
  apiVersion: string,
  resource: string,
  options?: { namespace?: string; labelSelector?: string; fieldSelector?: string },
): KubeObject[];
export function watermark(apiVersion: string, resource: string): string;

/** The functions behind the host calls, as componentize-js presents `capstan:plugin/host@0.1.0`. */
export interface HostImports {
  log(level: LogLevel, message: string): void;
  config(): string;
  getObject(apiVersion: string, resource: string, namespace: string | undefined, name: string): string | undefined;
  listObjects(apiVersion: string, resource: string, namespace?: string, labelSelector?: string, fieldSelector?: string): string;
  watermark(apiVersion: string, resource: string): string;
}
export function useHost(impl: HostImports): void;

export type Review = (request: AdmissionRequest) => AdmissionResponse | Promise<AdmissionResponse>;
export function runAdmission(review: Review, text: string): string | Promise<string>;
export function runJson(fn: (input: any) => unknown, what: string, text: string): string | Promise<string>;
export const WORLDS: Readonly<Record<'admission' | 'authenticator' | 'authorizer' | 'strategy' | 'converter', { exportName: string; input: string }>>;
export const ABI_VERSION: '0.1.0';

export namespace object {
  function getStr(object: unknown, path: string[]): string | undefined;
  function name(object: unknown): string;
  function namespace(object: unknown): string;
  function nameOrGenerateName(object: unknown): string | undefined;
  function labels(object: unknown): Record<string, string>;
  function annotations(object: unknown): Record<string, string>;
}
