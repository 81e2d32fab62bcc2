import type { AdmissionRequest, AdmissionResponse, KubeObject, LogLevel, Operation } from './index.js';

export function reset(): void;
export function setConfig(value: unknown): void;
export function setConfigText(text: string): void;
export function putObject(apiVersion: string, resource: string, object: KubeObject): void;
export function removeObject(apiVersion: string, resource: string, namespace: string, name: string): void;
export function failReads(message: string | null): void;
export function logs(): [LogLevel, string][];
export function request(operation: Operation, apiVersion: string, resource: string, kind: string, namespace: string, object: KubeObject): AdmissionRequest;
export function reviewText(request: AdmissionRequest): string;
export function applyPatch<T>(object: T, response: AdmissionResponse | { patch?: string }): T;
