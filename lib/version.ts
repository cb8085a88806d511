/** verity's version, reported in `--version`, reports and `clientInfo`. */
export const VERSION = "0.1.0";
