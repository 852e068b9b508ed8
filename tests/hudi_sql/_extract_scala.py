"""Regenerates scenarios_<class>.py from Apache Hudi's Scala Spark SQL tests (a maintenance tool, not a test).

    python tests/hudi_sql/_extract_scala.py <dir holding the .scala files> <commit> dml/TestInsertTable.scala ...

(the relative paths are under hudi-spark-datasource/hudi-spark/src/test/scala/org/apache/spark/sql/hudi/; only
their file names are looked up in <dir>). It keeps only the reference data of each Scala ``test("...")``: the SQL
text passed to ``spark.sql`` / ``checkAnswer`` / ``checkException(Contain)`` (after ``stripMargin``, with table
names -> ``{table}``, ``{table2}``..., each ``withTempDir`` -> ``{path}``, ``{path2}``..., the COW/MOR loop variable
-> ``{type}``) and the asserted rows or messages. Scala control flow is unrolled as the test runs it:
``withSQLConf(k -> v) { ... }`` -> ``SET k = v`` ... ``RESET k``; ``withTable`` -> a ``DROP TABLE`` at the end;
loops over literal values are repeated; ``if (HoodieSparkUtils.gteqSpark3_X)`` takes the Spark 3.5 branch;
``assertThrows`` / ``intercept`` blocks expect an error (message not asserted); a table's latest instant read through
``createMetaClient`` and the rows of a collected query become capture steps; each scenario's ``session`` holds the
SETs the class's earlier tests left (they share one Spark session). Anything the scanner cannot turn
into data (run-time values, helper methods, DataFrame API, threads) is reported in the scenario's
``untranslated`` (the runner skips it with that reason) and Scala-level asserts that are not SQL checks in its
``notes``, so nothing is dropped silently. Hand edits to the generated modules are lost on regeneration."""

from __future__ import annotations

import os
import pprint
import re
import sys

TEST_RE = re.compile(r'^  test\(s?"((?:[^"\\]|\\.)*)"\)', re.M)
CALL_RE = re.compile(r'\b(spark\.sql|checkAnswer|checkExceptionContain|checkExceptions|checkException|withSQLConf)\(')
TABLE_VAR_RE = re.compile(r'\bval\s+(\w+)\s*=\s*generateTableName\b')
STR_VAL_RE = re.compile(r'\bval\s+(\w+)\s*=\s*(s?"""|s?")')
LOOP_RE = re.compile(r'Seq\(\s*"(cow|mor)"\s*,\s*"(cow|mor)"\s*\)\.foreach\s*\{\s*(\w+)\s*=>')
OTHER_LOOP_RE = re.compile(r'Seq\([^)]*\)\.foreach\s*\{\s*\(?\s*\w+|\bfor\s*\(|\.foreach\s*\{')
ERROR_BLOCK_RE = re.compile(r'\b(assertThrows|intercept)\[(\w+)\]\s*\{')


def parse_string(text, i):
    """Scala string literal at text[i:] -> (value, end, interpolated) or None."""
    interp = text.startswith("s", i)
    j = i + 1 if interp else i
    if text.startswith('"""', j):
        end = text.index('"""', j + 3)
        while text.startswith('"', end + 3):   # closing run of quotes longer than 3
            end += 1
        return text[j + 3:end], end + 3, interp
    if text.startswith('"', j):
        k, out = j + 1, []
        while text[k] != '"':
            if text[k] == "\\":
                out.append({"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}.get(text[k + 1], "\\" + text[k + 1]))
                k += 2
            else:
                out.append(text[k])
                k += 1
        return "".join(out), k + 1, interp
    return None


def strip_margin(s):
    return "\n".join(re.sub(r"^\s*\|", "", line) for line in s.split("\n"))


def matching(text, i, open_ch="(", close_ch=")"):
    """Index of the bracket closing text[i] (an opening bracket); skips string literals."""
    depth, k = 0, i
    while k < len(text):
        c = text[k]
        if c == '"':
            lit = parse_string(text, k)
            k = lit[1]
            continue
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return k
        k += 1
    raise ValueError("unbalanced")


class Unresolved(Exception):
    pass


ROW_CELL_RE = re.compile(r"(\w+)(?:\.apply)?\((\d+)\)\.getString\((\d+)\)")
LATEST_INSTANT_RE = re.compile(r"(\w+)\s*\.(?:getActiveTimeline|reloadActiveTimeline\(\))\s*\.getAllCommitsTimeline"
                               r"\s*\.lastInstant\(\)\s*\.get\(\)\s*\.getTimestamp\b")


def row_cell(expr, env):
    """`rows.apply(i).getString(j)` / `rows(i).getString(j)` of rows a step captured -> '{rows[i][j]}'."""
    m = ROW_CELL_RE.fullmatch(expr.strip())
    if m and "__rows__" + m.group(1) in env:
        return "{%s[%s][%s]}" % m.groups()
    return None


def interpolate(s, env):
    def repl(m):
        name = m.group(1) or m.group(2)
        if name in env:
            return env[name]
        cell = row_cell(name, env)
        if cell is not None:
            return cell
        raise Unresolved(f"interpolates `{name}`, a Scala value (run-time result, helper or unsupported binding)")
    return re.sub(r"\$\{([^}]+)\}|\$(\w+)", repl, s)


def literal_arg(text, i, env):
    """A string-literal argument at text[i:] (whitespace, // comments skipped) -> (value, end) or Unresolved."""
    while text[i].isspace() or text.startswith("//", i):
        i = text.index("\n", i) + 1 if text.startswith("//", i) else i + 1
    lit = parse_string(text, i)
    if lit is None:
        raise Unresolved("non-literal argument: " + text[i:i + 40].split("\n")[0])
    value, end, interp = lit
    if text.startswith(".stripMargin", end):
        value, end = strip_margin(value), end + len(".stripMargin")
    if interp:
        value = interpolate(value, env)
    more = re.compile(r"\s*\+\s*(?=s?\")").match(text, end)   # "a " + "b"
    if more:
        rest, end = literal_arg(text, more.end(), env)
        lit2 = parse_string(text, more.end())
        value = value + (interpolate(lit2[0], env) if lit2[2] else lit2[0]) if "stripMargin" not in text[
            lit2[1]:lit2[1] + 12] else value + rest
    return value.strip(), end


VALUE_RE = re.compile(r'\s*(-?\d+\.\d+(?:[eE]-?\d+)?[dDfF]?|-?\d+[lL]?|null|true|false|"|Seq\(|Array\(|s"|\()')


def parse_values(text, env):
    """Scala expression list 'a, b, Seq(..)' -> python list; raise Unresolved on anything else."""
    text = re.sub(r"//[^\n]*", "", text)
    out, i = [], 0
    while i < len(text):
        if text[i] in " \n,\t":
            i += 1
            continue
        m = VALUE_RE.match(text, i)
        ident = re.compile(r"\s*(\w+)\s*(?=,|$)").match(text, i)
        if not m and ident and ident.group(1) in env:
            out.append(env[ident.group(1)])
            i = ident.end()
            continue
        if not m:
            raise Unresolved("expected value is a Scala expression: " + text[i:i + 40].split("\n")[0])
        tok = m.group(1)
        start = m.start(1)
        if tok in ('"', 's"'):
            v, i = literal_arg(text, start, env)
            lit = parse_string(text, start)  # keep the exact value (no strip)
            v = interpolate(lit[0], env) if lit[2] else lit[0]
            out.append(v)
        elif tok in ("Seq(", "Array(", "("):
            close = matching(text, start + len(tok) - 1)
            out.append(parse_values(text[start + len(tok):close], env))
            i = close + 1
        else:
            i = m.end(1)
            if tok == "null":
                out.append(None)
            elif tok in ("true", "false"):
                out.append(tok == "true")
            elif re.match(r"-?\d+[lL]?$", tok):
                out.append(int(tok.rstrip("lL")))
            else:
                out.append(float(tok.rstrip("dDfF")))
        rest = text[i:].lstrip()
        if rest and not rest.startswith(","):
            raise Unresolved("expression: " + text[start:start + 40].split("\n")[0])
    return out


CONSTANTS = {  # Hudi config constants interpolated in the tests -> their keys
    "SPARK_SQL_OPTIMIZED_WRITES.key()": "hoodie.spark.sql.optimized.writes.enable",
    "SPARK_SQL_OPTIMIZED_WRITES.key": "hoodie.spark.sql.optimized.writes.enable",
    "MERGE_SMALL_FILE_GROUP_CANDIDATES_LIMIT.key": "hoodie.merge.small.file.group.candidates.limit",
    "MERGE_SMALL_FILE_GROUP_CANDIDATES_LIMIT.key()": "hoodie.merge.small.file.group.candidates.limit",
    "SPARK_SQL_INSERT_INTO_OPERATION.key": "hoodie.spark.sql.insert.into.operation",
    "SPARK_SQL_INSERT_INTO_OPERATION.key()": "hoodie.spark.sql.insert.into.operation",
    "WriteOperationType.BULK_INSERT.value()": "bulk_insert",
    "WriteOperationType.INSERT.value()": "insert",
    "WriteOperationType.UPSERT.value()": "upsert",
}
SPARK = (3, 5)   # the Spark-version branches taken: the newest Spark Hudi 0.15 supports


def spark_cond(cond):
    cond = cond.strip()
    m = re.fullmatch(r"(?:HoodieSparkUtils\.)?gteqSpark(\d)_(\d)(?:_\d)?", cond)
    if m:
        return SPARK >= (int(m.group(1)), int(m.group(2)))
    m = re.fullmatch(r"(?:HoodieSparkUtils\.)?(?:isSpark|isSpark)(\d)(?:_(\d))?", cond)
    if m:
        return SPARK[0] == int(m.group(1)) and (m.group(2) is None or SPARK[1] == int(m.group(2)))
    m = re.fullmatch(r"!\s*(.+)", cond)
    if m:
        r = spark_cond(m.group(1))
        return None if r is None else not r
    m = re.fullmatch(r"(\w+)\.equals(?:IgnoreCase)?\(\s*\"([^\"]*)\"\s*\)|(\w+)\s*==\s*\"([^\"]*)\"", cond)
    return None if not m else ("EQ", m.group(1) or m.group(3), m.group(2) or m.group(4))


EVENT_RE = re.compile(
    r'\bval\s+(?P<val>\w+)\s*(?::\s*String\s*)?=\s*(?P<valif>if\s*\()?'
    r'|\b(?P<call>spark\.sql|checkAnswer|checkExceptionContain|checkExceptions|checkException|withSQLConf)\('
    r'|Seq\s*\((?P<loop>[^()]*)\)\.foreach\s*\{\s*\(?\s*(?P<lvar>\w+)\s*(?::\s*\w+)?\s*\)?\s*=>'
    r'|\bif\s*\((?P<ifc>[^{}]*?)\)\s*\{'
    r'|\b(?P<err>assertThrows|intercept)\[(?P<exc>\w+)\]\s*\{'
    r'|\bwithTable\(generateTableName\)\s*\{\s*(?P<wt>\w+)\s*=>'
    r'|\bwithTempDir\s*\{\s*(?P<wtd>\w+)\s*=>'
    r'|\bspark\.(?:sessionState\.conf\.unsetConf|conf\.unset)\(\s*"(?P<unset>[\w.]+)"\s*\)'
    r'|\b(?P<lseq>\w+)\.foreach\s*\{\s*(?:case\s*\((?P<lvars>[\w\s,]+)\)|(?P<lvar2>\w+))\s*=>')


def eval_cond(cond, env):
    c = cond.strip()
    neg = c.startswith("!")
    if re.fullmatch(r"\w+", c.lstrip("! ")) and c.lstrip("! ") in env and env[c.lstrip("! ")] in ("true", "false"):
        return (env[c.lstrip("! ")] == "true") != neg
    r = spark_cond(cond)
    if isinstance(r, tuple):
        var, lit = r[1], r[2]
        if var not in env:
            raise Unresolved("if on " + var)
        return env[var].lower() == lit.lower()
    if r is None:
        raise Unresolved("Scala if-branch: " + cond[:50])
    return r


def else_block(body, close):
    """After an if-block ending at close: (start, end) of 'else { ... }' / 'else if (..) {..}' or None."""
    m = re.compile(r"\s*else\s*").match(body, close + 1)
    if not m:
        return None
    return m.end()


def walk(body, lo, hi, env, ctx):
    steps = []
    pos = lo
    while True:
        m = EVENT_RE.search(body, pos, hi)
        if not m:
            break
        pos = m.end()
        try:
            if m.group("val"):
                name = m.group("val")
                if m.group("valif"):
                    # if (c) {"A"} else if (c2) {"B"} else {"C"}  or without braces
                    chosen, k = None, m.end() - 1
                    while True:
                        cc = matching(body, k)
                        cond = body[k + 1:cc]
                        j = cc + 1
                        while body[j].isspace():
                            j += 1
                        if body[j] == "{":
                            bend = matching(body, j, "{", "}")
                            val_text = body[j + 1:bend].strip()
                            after = bend + 1
                        else:
                            lit = parse_string(body, j)
                            if lit is None:
                                raise Unresolved("val if-expression")
                            val_text, after = body[j:lit[1]], lit[1]
                        if chosen is None and eval_cond(cond, env):
                            chosen = val_text
                        e = re.compile(r"\s*else\s*").match(body, after)
                        if not e:
                            pos = after
                            break
                        k = e.end()
                        if body.startswith("if", k):
                            k = body.index("(", k)
                            continue
                        if body[k] == "{":
                            bend = matching(body, k, "{", "}")
                            val_text, pos = body[k + 1:bend].strip(), bend + 1
                        else:
                            lit = parse_string(body, k)
                            val_text, pos = body[k:lit[1]], lit[1]
                        if chosen is None:
                            chosen = val_text
                        break
                    if chosen is None:
                        raise Unresolved("val " + name)
                    chosen = re.sub(r"//[^\n]*", "", chosen)
                    if chosen.strip().startswith("Seq("):
                        env["__seq__" + name] = parse_values(chosen, env)[0]
                        continue
                    v, _ = literal_arg(chosen + " ", 0, env)
                    env[name] = v
                    continue
                j = m.end()
                while body[j].isspace():
                    j += 1
                gm = re.compile(r's"([\w.]*)\$\{?generateTableName\}?"').match(body, j)
                if gm:
                    ctx["ntables"] += 1
                    n = ctx["ntables"]
                    env[name] = gm.group(1) + ("{table}" if n == 1 else "{table%d}" % n)
                    pos = gm.end()
                elif body.startswith("generateTableName", j):
                    ctx["ntables"] += 1
                    n = ctx["ntables"]
                    env[name] = "{table}" if n == 1 else "{table%d}" % n
                elif body.startswith("Seq(", j):
                    close_seq = matching(body, j + 3)
                    env["__seq__" + name] = parse_values(body[j:close_seq + 1], env)[0]
                    pos = close_seq + 1
                elif parse_string(body, j) is not None:
                    v, pos = literal_arg(body, j, env)
                    env[name] = v
                elif body.startswith("createMetaClient(", j):   # a meta client of a path: its timeline is read
                    close_mc = matching(body, j + len("createMetaClient"))
                    args = body[j + len("createMetaClient") + 1:close_mc]
                    try:
                        env["__mc__" + name], _ = literal_arg(args + " ", args.index(",") + 1, env)
                    except (Unresolved, ValueError):
                        pass    # a path that is not a literal: the meta client stays unknown
                    pos = close_mc + 1
                elif LATEST_INSTANT_RE.match(body, j) and "__mc__" + LATEST_INSTANT_RE.match(body, j).group(1) in env:
                    latest = LATEST_INSTANT_RE.match(body, j)
                    steps.append({"capture": name, "latest_instant": env["__mc__" + latest.group(1)]})
                    env[name] = "{%s}" % name
                    pos = latest.end()
                elif re.compile(r"spark\.sql\(").match(body, j) and re.compile(r"\s*\.collect\(\)").match(
                        body, matching(body, j + len("spark.sql")) + 1):   # rows later steps read
                    tail = re.compile(r"\s*\.collect\(\)").match(body, matching(body, j + len("spark.sql")) + 1)
                    sql, _ = literal_arg(body, j + len("spark.sql("), env)
                    steps.append({"sql": sql, "capture_rows": name})
                    env["__rows__" + name] = True
                    pos = tail.end()
                elif row_cell(body[j:body.index("\n", j)], env) is not None:
                    env[name] = row_cell(body[j:body.index("\n", j)], env)
                    pos = body.index("\n", j)
                continue
            if m.group("loop") is not None:
                block_open = m.end() - 1
                while body[block_open] != "{":
                    block_open -= 1
                block_close = matching(body, block_open, "{", "}")
                pos = block_close + 1
                var = m.group("lvar")
                if re.fullmatch(r'\s*"(cow|mor)"\s*,\s*"(cow|mor)"\s*', m.group("loop")) and not ctx["types"]:
                    ctx["types"] = ["cow", "mor"]
                    env[var] = "{type}"
                    steps += walk(body, block_open + 1, block_close, env, ctx)
                    continue
                values = parse_values(m.group("loop"), env)
                for v in values:
                    if not isinstance(v, (str, bool, int)):
                        raise Unresolved("loop over " + m.group("loop")[:40])
                    env2 = dict(env)
                    env2[var] = str(v).lower() if isinstance(v, bool) else str(v)
                    steps += walk(body, block_open + 1, block_close, env2, ctx)
                continue
            if m.group("ifc") is not None:
                block_open = m.end() - 1
                block_close = matching(body, block_open, "{", "}")
                take = eval_cond(m.group("ifc"), env)
                e = re.compile(r"\s*else\s*\{").match(body, block_close + 1)
                if take:
                    steps += walk(body, block_open + 1, block_close, env, ctx)
                if e:
                    eo = e.end() - 1
                    ec = matching(body, eo, "{", "}")
                    if not take:
                        steps += walk(body, eo + 1, ec, env, ctx)
                    pos = ec + 1
                else:
                    if re.compile(r"\s*else\b").match(body, block_close + 1):
                        raise Unresolved("Scala else-if chain")
                    pos = block_close + 1
                continue
            if m.group("lseq"):
                if "__seq__" + m.group("lseq") not in env:
                    raise Unresolved("loop over " + m.group("lseq"))
                block_open = m.end() - 1
                while body[block_open] != "{":
                    block_open -= 1
                block_close = matching(body, block_open, "{", "}")
                pos = block_close + 1
                names = [v.strip() for v in (m.group("lvars") or m.group("lvar2")).split(",")]
                for item in env["__seq__" + m.group("lseq")]:
                    item = item if len(names) > 1 else [item]
                    env2 = dict(env)
                    for var, v in zip(names, item):
                        env2[var] = str(v).lower() if isinstance(v, bool) else str(v)
                    steps += walk(body, block_open + 1, block_close, env2, ctx)
                continue
            if m.group("wtd"):
                # each withTempDir is a fresh directory: {path}, {path2}, ... (one inside a loop: one per round)
                block_open = body.index("{", m.start())
                block_close = matching(body, block_open, "{", "}")
                ctx["npaths"] += 1
                ph = "{path}" if ctx["npaths"] == 1 else "{path%d}" % ctx["npaths"]
                env2 = dict(env)
                var = m.group("wtd")
                for suffix in (".getCanonicalPath", ".getCanonicalPath()", ".getAbsolutePath", ".getAbsolutePath()",
                               ".toString", ".toString()"):
                    env2[var + suffix] = ph
                steps += walk(body, block_open + 1, block_close, env2, ctx)
                pos = block_close + 1
                continue
            if m.group("unset"):   # the session forgets a key: as RESET
                steps.append({"sql": f"RESET {m.group('unset')}"})
                pos = m.end()
                continue
            if m.group("wt"):
                block_open = body.index("{", m.start())
                block_close = matching(body, block_open, "{", "}")
                ctx["ntables"] += 1
                n = ctx["ntables"]
                env2 = dict(env)
                env2[m.group("wt")] = ph = "{table}" if n == 1 else "{table%d}" % n
                steps += walk(body, block_open + 1, block_close, env2, ctx)
                steps.append({"sql": f"DROP TABLE IF EXISTS {ph}"})   # withTable drops it
                pos = block_close + 1
                continue
            if m.group("err"):
                block_open = m.end() - 1
                block_close = matching(body, block_open, "{", "}")
                inner = walk(body, block_open + 1, block_close, env, ctx)
                for st in inner:
                    if "rows" not in st and "error" not in st:
                        st.update({"error": "", "match": "any", "exception": m.group("exc")})
                steps += inner
                pos = block_close + 1
                continue
            call = m.group("call")
            open_paren = m.end() - 1
            close = matching(body, open_paren)
            if call == "withSQLConf":
                raw = re.findall(r'("[^"]+"|[\w.]+(?:\(\))?)\s*->\s*("[^"]*"|[\w.]+(?:\(\))?)',
                                 body[open_paren:close])
                if body[open_paren + 1:close].count("->") != len(raw) or any(
                        not (x.startswith('"') or x in env) for pair in raw for x in pair):
                    raise Unresolved("withSQLConf with non-literal keys")
                pairs = [tuple(x.strip('"') if x.startswith('"') else env[x] for x in pair) for pair in raw]
                block_open = body.index("{", close)
                block_close = matching(body, block_open, "{", "}")
                steps += [{"sql": f"SET {k} = {v}", "scoped": True} for k, v in pairs]
                steps += walk(body, block_open + 1, block_close, env, ctx)
                steps += [{"sql": f"RESET {k}", "scoped": True} for k, _ in pairs]
                pos = block_close + 1
                continue
            sql, end = literal_arg(body, open_paren + 1, env)
            pos = close + 1
            if call == "spark.sql":
                if re.match(r"\)\s*\.(collect|count|show|head|first|take)", body[end:end + 20]):
                    ctx["notes"].add("a query result checked in Scala, not by checkAnswer, is not compared")
                steps.append({"sql": sql})
                continue
            k = close + 1
            while body[k].isspace():
                k += 1
            if body[k] != "(":
                raise Unresolved(call + " without expected values")
            close2 = matching(body, k)
            pos = close2 + 1
            inner = body[k + 1:close2]
            if call == "checkAnswer":
                spread = re.fullmatch(r"\s*(\w+)\s*:\s*_\*\s*", inner)
                if re.fullmatch(r"\s*Seq\.empty(\[\w+\])?\s*:\s*_\*\s*", inner):
                    rows = []
                elif spread and "__seq__" + spread.group(1) in env:
                    rows = env["__seq__" + spread.group(1)]
                else:
                    rows = parse_values(inner, env)
                if any(not isinstance(r, list) for r in rows):
                    raise Unresolved("checkAnswer rows not Seq(...)")
                steps.append({"sql": sql, "rows": [tuple(r) for r in rows]})
            elif call == "checkExceptions":
                msgs = parse_values(inner, env)
                steps.append({"sql": sql, "error": msgs[0] if len(msgs) == 1 else msgs, "match": "first_line_in"})
            else:
                msg = parse_values(inner, env)
                if len(msg) != 1:
                    raise Unresolved("error message expression")
                steps.append({"sql": sql, "error": msg[0],
                              "match": "exact" if call == "checkException" else "contains"})
        except Unresolved as e:
            ctx["problems"].add(str(e))
        except (ValueError, IndexError) as e:
            ctx["problems"].add("parse: %r" % e)
    return steps


def extract_test(name, body):
    env = {"tmp.getCanonicalPath": "{path}", "tmp.getCanonicalPath()": "{path}",
           "tmpDir.getCanonicalPath": "{path}", **CONSTANTS}
    ctx = {"ntables": 0, "npaths": 0, "types": None, "notes": set(), "problems": set()}
    steps = walk(body, 0, len(body), env, ctx)
    notes = ctx["notes"]
    for pat, what in [(r"\.write\s*\.(?:format|mode|option|save|insertInto)|spark\.read\b|\.toDF\(|createDataFrame|\.saveAsTable", "DataFrame API"),
                      (r"\bassert(?!Throws)\w*\s*[\(\[]|\bassertResult|assertEquals|assertTrue|assertFalse",
                       "non-SQL asserts left out"),
                      (r"metaClient|HoodieTableMetaClient|createMetaClient|HoodieTestUtils", "meta client inspection")]:
        if re.search(pat, body):
            notes.add(what)
    if "DataFrame API" in notes:
        ctx["problems"].add("DataFrame API (spark.read / df.write) steps")
    if re.search(r"\bThread\b|CountDownLatch|Future\[", body):
        ctx["problems"].add("threads / Spark listeners (concurrency, stage counting)")
    return {"table_types": ctx["types"], "steps": steps, "notes": sorted(notes),
            "untranslated": sorted(ctx["problems"])}


def extract_file(path):
    text = open(path).read()
    heads = list(TEST_RE.finditer(text))
    helpers = set(re.findall(r"^  (?:private |protected )?def (\w+)", text, re.M))
    out = []
    seen = {}
    for m in heads:
        name = m.group(1)
        block_open = text.index("{", m.end())
        body = text[block_open:matching(text, block_open, "{", "}") + 1]
        scen = extract_test(name, body)
        called = sorted(h for h in helpers if re.search(r"\b%s\s*[\(\[]" % h, body))
        if called:
            scen["untranslated"] = sorted(set(scen["untranslated"]) | {"calls Scala helper " + ", ".join(called)})
        seen[name] = seen.get(name, 0) + 1
        scen["name"] = name if seen[name] == 1 else f"{name} #{seen[name]}"
        out.append(scen)
    add_session(out)
    return out


SET_STEP_RE = re.compile(r"^\s*set\s+([\w.]+)\s*=\s*(.*?)\s*;?\s*$", re.I | re.S)
RESET_STEP_RE = re.compile(r"^\s*reset\s+([\w.]+)\s*;?\s*$", re.I)


def add_session(scenarios):
    """Hudi's Scala tests of one class share one Spark session and run in declaration order; a plain
    ``spark.sql("set k = v")`` (not withSQLConf, which restores) stays set for the tests after it. Each scenario's
    ``session`` lists the SETs its class's earlier tests left, so it runs in the session the Scala test saw."""
    leaked = {}
    for scen in scenarios:
        scen["session"] = [f"SET {k} = {v}" for k, v in leaked.items()]
        for step in scen["steps"]:
            if step.get("scoped") or "error" in step or "sql" not in step:
                continue
            m = SET_STEP_RE.match(step["sql"])
            if m:
                leaked[m.group(1)] = m.group(2)
            m = RESET_STEP_RE.match(step["sql"])
            if m:
                leaked.pop(m.group(1), None)


def slug(name):
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:70]


def write_module(cls, source_path, commit, scenarios, out_dir):
    mod = os.path.join(out_dir, "scenarios_" + re.sub(r"(?<!^)(?=[A-Z])", "_", cls[4:]).lower() + ".py")
    lines = [f'"""Reference data from Apache Hudi {cls}.scala ({source_path} at commit {commit}).',
             "",
             "Generated by _extract_scala.py: SQL text and asserted rows / messages only. Each scenario: id, scala",
             "(class and test name), table_types (None: run once; ['cow','mor']: the Scala test loops over both),",
             "steps (sql + rows | error + match), untranslated (why the scenario cannot run as data: skipped),",
             'notes (Scala-level asserts of the test that are not SQL checks, left out)."""', "",
             f"SCALA_CLASS = {cls!r}", f"SOURCE = {source_path!r}", f"COMMIT = {commit!r}", "", "SCENARIOS = ["]
    ids = set()
    for s in scenarios:
        sid = slug(cls[4:] + "_" + s["name"])
        while sid in ids:
            sid += "_b"
        ids.add(sid)
        entry = {"id": sid, "scala": f"{cls}: {s['name']}", "table_types": s["table_types"],
                 "session": s["session"], "steps": s["steps"],
                 "untranslated": s["untranslated"], "notes": s["notes"]}
        lines.append("    " + pprint.pformat(entry, width=116, sort_dicts=False).replace("\n", "\n    ") + ",")
    lines.append("]")
    with open(mod, "w") as f:
        f.write("\n".join(lines) + "\n")
    return mod


if __name__ == "__main__":
    src, commit = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "unknown")
    here = os.path.dirname(os.path.abspath(__file__))
    base = "hudi-spark-datasource/hudi-spark/src/test/scala/org/apache/spark/sql/hudi/"
    for rel in sys.argv[3:]:
        cls = os.path.basename(rel)[:-6]
        scen = extract_file(os.path.join(src, os.path.basename(rel)))
        print(write_module(cls, base + rel, commit, scen, here), len(scen),
              sum(1 for s in scen if not s["untranslated"]))
