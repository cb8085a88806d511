/**
 * Starting a server from a definition: the one launcher every command uses
 * (`launcher.ts`, effectful) and the launch request it assembles
 * (`request.ts`, pure).
 *
 * @module
 */
export * from "./launcher.ts";
export * from "./request.ts";
