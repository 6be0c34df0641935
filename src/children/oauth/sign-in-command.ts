// The command a person runs in a shell to sign in to a child.
import { shellWord } from "../../shared/shell-word.js";

/**
 * `gaggle auth login --config FILE NAME`: the file named, since the shell it is run in may find another config
 * (or none) where gaggle's client found this one.
 */
export function signInCommand(child: { name: string; configFile: string }): string {
  return `gaggle auth login --config ${shellWord(child.configFile)} ${child.name}`;
}
