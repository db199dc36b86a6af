#!/usr/bin/env python3
"""Post or update nixcut's pull-request comment through the GitHub REST API.

Reads the comment (a file `nixcut ... --comment` wrote, its first line the marker
`<!-- nixcut:comment id=ID -->`), lists the pull request's issue comments page by page
(following the `Link: rel="next"` header), and PATCHes the first comment whose body
starts with the same marker line, or else POSTs a new one.

Environment: GITHUB_API_URL (default https://api.github.com), GITHUB_REPOSITORY
(owner/name), GITHUB_EVENT_PATH (the event; the pull request's number is read from
`pull_request.number`, `issue.number` or `number`), GITHUB_TOKEN, and NIXCUT_PR to
give the number directly.

Usage: comment.py COMMENT_FILE
Exit: 0 posted or updated (or nothing to do: no pull request), 3 the API refused or
failed (the message says why; a 403 is a token without write permission), 2 bad use
or a bad comment file.
"""

import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

LIMIT = 65536
MARKER = re.compile(r"^<!-- nixcut:comment id=[A-Za-z0-9._-]+ -->$")
MAX_PAGES = 1000


class ApiError(Exception):
    pass


def request(method, url, token, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Accept", "application/vnd.github+json")
    req.add_header("X-GitHub-Api-Version", "2022-11-28")
    req.add_header("User-Agent", "nixcut-action")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            text = resp.read().decode("utf-8", "replace")
            return resp.status, resp.headers, (json.loads(text) if text else None)
    except urllib.error.HTTPError as e:
        detail = e.read().decode("utf-8", "replace")[:500]
        try:
            detail = json.loads(detail).get("message", detail)
        except (ValueError, AttributeError):
            pass
        hint = ""
        if e.code in (401, 403):
            hint = (
                "; the token cannot write comments: give the job "
                "`permissions: pull-requests: write` (pull requests from forks get a "
                "read-only token)"
            )
        raise ApiError(f"{method} {url}: HTTP {e.code} {detail}{hint}") from None
    except (urllib.error.URLError, OSError) as e:
        raise ApiError(f"{method} {url}: {e}") from None


def workflow_data(s):
    """A workflow command's message: `%`, CR and LF escaped."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def next_link(headers):
    link = headers.get("Link") or ""
    for part in link.split(","):
        m = re.match(r'\s*<([^>]*)>\s*;(.*)', part)
        if m and re.search(r'rel="?next"?', m.group(2)):
            return m.group(1)
    return None


def pr_number(event_path):
    if os.environ.get("NIXCUT_PR"):
        return int(os.environ["NIXCUT_PR"])
    if not event_path:
        return None
    with open(event_path, encoding="utf-8") as f:
        event = json.load(f)
    for path in (("pull_request", "number"), ("issue", "number"), ("number",)):
        v = event
        for k in path:
            v = v.get(k) if isinstance(v, dict) else None
        if isinstance(v, int):
            return v
    return None


def find_ours(api, repo, number, token, marker):
    url = f"{api}/repos/{repo}/issues/{number}/comments?per_page=100"
    for _ in range(MAX_PAGES):
        _, headers, comments = request("GET", url, token)
        if not isinstance(comments, list):
            raise ApiError(f"GET {url}: expected a list of comments")
        for c in comments:
            body = c.get("body") or ""
            if body.split("\n", 1)[0].rstrip("\r") == marker:
                return c["id"]
        url = next_link(headers)
        if not url:
            return None
    raise ApiError(f"more than {MAX_PAGES} pages of comments")


def main(argv):
    if len(argv) != 2:
        print("usage: comment.py COMMENT_FILE", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            body = f.read()
    except (OSError, UnicodeDecodeError) as e:
        print(f"nixcut-action: cannot read the comment {argv[1]}: {e}", file=sys.stderr)
        return 2
    marker = body.split("\n", 1)[0]
    if not MARKER.match(marker):
        print(
            f"nixcut-action: {argv[1]} line 1 is not a nixcut comment marker "
            "(`<!-- nixcut:comment id=ID -->`); write it with --comment",
            file=sys.stderr,
        )
        return 2
    if len(body) > LIMIT or len(body.encode()) > 4 * LIMIT:
        print(f"nixcut-action: {argv[1]} holds {len(body)} characters, over GitHub's {LIMIT}",
              file=sys.stderr)
        return 2
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
        print(f"nixcut-action: GITHUB_REPOSITORY `{repo}` is not owner/name", file=sys.stderr)
        return 2
    try:
        number = pr_number(os.environ.get("GITHUB_EVENT_PATH"))
    except (OSError, ValueError) as e:
        print(f"nixcut-action: cannot read the event: {e}", file=sys.stderr)
        return 2
    if number is None:
        print("nixcut-action: not a pull request: no comment posted")
        return 0
    token = os.environ.get("GITHUB_TOKEN", "")
    try:
        ours = find_ours(api, repo, number, token, marker)
        if ours is None:
            _, _, c = request("POST", f"{api}/repos/{repo}/issues/{number}/comments", token,
                              {"body": body})
            print(f"nixcut-action: posted comment {c.get('id')} on #{number}")
        else:
            request("PATCH", f"{api}/repos/{repo}/issues/comments/{ours}", token,
                    {"body": body})
            print(f"nixcut-action: updated comment {ours} on #{number}")
    except ApiError as e:
        print(f"::warning title=nixcut comment not posted::{workflow_data(str(e))}")
        print(f"nixcut-action: comment not posted: {e}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
