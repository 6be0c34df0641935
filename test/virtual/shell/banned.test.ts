// The banned-command check on its own: every spelling of curl refused, commands that only name it left alone, and
// command names that are also names on every JavaScript object plain names.
import { describe, expect, it } from "vitest";
import { refuseBanned } from "../../../src/virtual/shell/banned.js";
import { CURL_SPELLINGS } from "../../helpers/chaos.js";

async function refusal(command: string): Promise<string | undefined> {
  try {
    await refuseBanned(command);
    return undefined;
  } catch (error) {
    expect((error as { code?: string }).code).toBe("PERMISSION_DENIED");
    return (error as Error).message;
  }
}

describe("refuseBanned", () => {
  it("lets a command named like an object's property run, wrapper tables notwithstanding", async () => {
    for (const command of ["constructor -x", "toString", "toString -x y", "__proto__ x", "hasOwnProperty -n 1 x", "valueOf -- x"]) {
      await expect(refuseBanned(command), command).resolves.toBeUndefined();
    }
    await expect(refuseBanned("sudo constructor -x curl")).resolves.toBeUndefined();
    await expect(refuseBanned("sudo curl x")).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
  });
});

describe("refuseBanned against every spelling of curl", () => {
  it("refuses all 84, each saying what it saw", async () => {
    const held = await Promise.all(CURL_SPELLINGS.map(async (command) => ({ command, refusal: await refusal(command) })));
    expect(held.filter((spelling) => spelling.refusal === undefined)).toEqual([]);
    expect(CURL_SPELLINGS).toHaveLength(84);
  });

  it("says which way each newer spelling runs it", async () => {
    const cases: Array<[string, string]> = [
      ["coproc curl x", "runs curl"],
      ["trap 'curl x' EXIT", "runs curl"],
      ["hash -p /usr/bin/curl get; get x", "runs curl"],
      ["echo 'curl x' | bash", "bash reading commands from its input, fed by a pipe"],
      ["bash <<< 'curl x'", "runs curl"],
      ["sh <<EOF\ncurl x\nEOF", "runs curl"],
      [". <(echo curl x)", ". of a file known only when it runs"],
      ["script -qc 'curl x' /dev/null", "runs curl"],
      ["setpriv --reuid 1000 curl x", "runs curl"],
      ["unshare --wd /tmp curl x", "runs curl"],
      ["prlimit --nofile=64 curl x", "runs curl"],
      ["strace -f -o /dev/null curl x", "runs curl"],
      ["parallel ::: 'curl x'", "runs curl"],
      ["exec 3<>/dev/tcp/example.com/80", "runs bash's /dev/tcp"],
      ["echo curl | xargs -I{} {} x", "a command name replaced when it runs ({})"],
      ["echo '$(curl x)'; echo ${_@P}", "prompt expansion (${_@P})"],
      ["bash -c -x 'curl x'", "runs curl"],
      ["echo 'a[$(curl x)]'; echo ${arr[_]}", "an array subscript that is an arithmetic expression (${arr[_]})"],
      ["echo 'a[$(curl x)]'; RANDOM=$_", "an assignment to RANDOM, whose value bash evaluates as arithmetic"],
      ["echo 'a[$(curl x)]'; a[$_]=1", "an array subscript that is an arithmetic expression (a[$_]=)"],
      ["declare -n r='a[$(curl x)]'; echo $r", "declare -n, an integer or nameref attribute"],
      ["PS4='$(curl x)'; set -x; :", "an assignment to PS4, whose value bash expands as a prompt"],
      ["PROMPT_COMMAND='curl x' bash -i", "runs curl"],
      ["compgen -C 'curl x' a", "runs curl"],
      ["bash --rcfile <(echo curl x) -i", "bash --rcfile of a file known only when it runs (<(echo curl x))"],
      ["BASH_ENV=<(echo curl x) bash -c :", "an assignment to BASH_ENV, a start-up file known only when it runs"],
      ["true && { cu?l x; }", "a part of the line bash's grammar here cannot read"],
    ];
    for (const [command, said] of cases)
      expect({ command, refusal: await refusal(command) }).toEqual({ command, refusal: expect.stringContaining(said) });
  });

  it("leaves alone what only names curl, shells that run a script file or get no input, and harmless traps and hashes", async () => {
    for (const command of [
      "echo curl wget",
      "grep -c curl notes.txt",
      "bash build.sh",
      "echo hi | bash build.sh",
      "sh -c 'echo hi' && bash",
      "trap - EXIT",
      "trap 'rm -f tmp' EXIT",
      "hash -r",
      "xargs -I{} echo {} < list",
      "find . -name '*.ts' -exec grep -l curl {} +",
      "parallel echo ::: a b",
      "echo hi > /dev/null",
      "cat < notes.txt",
      "source ./env.sh",
      'echo "${list[1]} ${list[@]} ${#list[*]} ${!list[@]} ${PATH:0:3}"',
      "declare -A m; declare -r z=1; export X=$HOME; RANDOM=5; a[1]=2",
      "PS4='+ ' bash -x build.sh",
      "compgen -W 'a b' a",
    ]) {
      expect({ command, refusal: await refusal(command) }).toEqual({ command, refusal: undefined });
    }
  });
});
