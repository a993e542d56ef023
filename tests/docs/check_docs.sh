#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The repository explains itself (issue 9): no text file points outside it, and the documentation's links resolve.
# Usage: check_docs.sh SOURCE_DIR. Fails (exit 1) listing every offence:
#  1. a tracked text file outside bench/results/ that mentions the physics notes shipped beside the repository
#     (the two patterns are assembled below so that this script does not match itself);
#  2. a Markdown link in bench/results/*.md whose target is in that folder beside the repository;
#  3. a relative Markdown link in README.md or docs/*.md whose file does not exist or lies outside the repository,
#     or whose #anchor names no heading (GitHub's slugs: lower case, punctuation dropped, spaces to hyphens, -1, -2 …
#     for repeats) and no <a id>.
# Code blocks and inline code are skipped. Needs bash, git (or find) and perl (Debian's perl-base is Essential).
set -euo pipefail
root="${1:?usage: check_docs.sh SOURCE_DIR}"
cd "$root"
out="shared"
pat1="../${out}/"
pat2="${out}/PHY""SICS" # split so that a search of the tree for the name does not find this line
fail=0

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files() { git ls-files; }
else
    files() { find . -type f -not -path './.git/*' -not -path './build*' | sed 's|^\./||'; }
fi

# 1. Mentions of the notes beside the repository.
while IFS= read -r f; do
    case "$f" in bench/results/*) continue ;; esac
    [ -f "$f" ] || continue
    if hits=$(grep -I -n -F -e "$pat1" -e "$pat2" -- "$f"); then
        while IFS= read -r h; do echo "$f:$h: points outside the repository (use docs/)"; done <<<"$hits"
        fail=1
    fi
done < <(files)

# 2. Links out of the repository in the historical bench results.
while IFS= read -r f; do
    if hits=$(grep -n -E "\]\([^)]*${out}/" -- "$f"); then
        while IFS= read -r h; do echo "$f:$h: link points outside the repository"; done <<<"$hits"
        fail=1
    fi
done < <(files | grep -E '^bench/results/.*\.md$' || true)

# 3. Relative links in README.md and docs/*.md.
export LC_ALL=C.UTF-8
check_links() {
    perl -CSD -Mutf8 -e '
        use strict; use warnings; use Cwd ();
        my $root = Cwd::abs_path(".") . "/";
        my %anchors;  # file => { slug => 1 }
        sub anchors_of {
            my ($file) = @_;
            return $anchors{$file} if $anchors{$file};
            my %a; my %seen; my $fence = 0;
            open(my $fh, "<:encoding(UTF-8)", $file) or return {};
            while (my $l = <$fh>) {
                if ($l =~ /^\s*(```|~~~)/) { $fence = !$fence; next; }
                next if $fence;
                while ($l =~ /<a\s+(?:id|name)="([^"]+)"/g) { $a{$1} = 1; }
                next unless $l =~ /^#{1,6}\s+(.*?)\s*#*\s*$/;
                my $s = lc $1;
                $s =~ s/<[^>]*>//g;              # inline HTML
                $s =~ s/\[([^\]]*)\]\([^)]*\)/$1/g; # links keep their text
                $s =~ s/[^\p{L}\p{N}\p{M} _-]//g;  # punctuation and symbols go
                $s =~ s/ /-/g;
                my $slug = $seen{$s}++ ? "$s-" . ($seen{$s} - 1) : $s;
                $a{$slug} = 1;
            }
            close $fh;
            return $anchors{$file} = \%a;
        }
        my $bad = 0;
        for my $file (@ARGV) {
            open(my $fh, "<:encoding(UTF-8)", $file) or die "$file: $!";
            my $fence = 0; my $n = 0;
            (my $dir = $file) =~ s{[^/]*$}{};
            while (my $l = <$fh>) {
                $n++;
                if ($l =~ /^\s*(```|~~~)/) { $fence = !$fence; next; }
                next if $fence;
                $l =~ s/`[^`]*`//g;
                while ($l =~ /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g) {
                    my $t = $1;
                    next if $t =~ /^[a-z][a-z0-9+.-]*:/i;   # http:, https:, mailto: …
                    my ($path, $anchor) = $t =~ /^([^#]*)(?:#(.*))?$/;
                    my $target = $path eq "" ? $file : "$dir$path";
                    if ($path ne "" && !-e $target) {
                        print "$file:$n: link target $t does not exist\n"; $bad = 1; next;
                    }
                    if ($path ne "" && index(Cwd::abs_path($target) . "/", $root) != 0) {
                        print "$file:$n: link target $t lies outside the repository\n"; $bad = 1; next;
                    }
                    next unless defined $anchor && $anchor ne "" && $target =~ /\.md$/ && -f $target;
                    my $want = $anchor; $want =~ s/%([0-9A-Fa-f]{2})/chr(hex($1))/ge;
                    utf8::decode($want);
                    unless (anchors_of($target)->{lc $want}) {
                        print "$file:$n: link $t: no heading or anchor \"$anchor\" in $target\n"; $bad = 1;
                    }
                }
            }
            close $fh;
        }
        exit $bad;
    ' "$@"
}
docs=(README.md)
for f in docs/*.md; do [ -f "$f" ] && docs+=("$f"); done
check_links "${docs[@]}" || fail=1

if [ "$fail" -ne 0 ]; then
    echo "check_docs: FAILED" >&2
    exit 1
fi
echo "check_docs: no mention of the notes beside the repository; ${#docs[@]} Markdown files, every relative link resolves"
