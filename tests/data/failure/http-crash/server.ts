// Dies at start with an error and a stack, as a server missing a dependency would.
function loadConfig(): never {
  throw new Error("config store unreachable: ECONNREFUSED");
}
loadConfig();
