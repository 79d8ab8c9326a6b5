// Package docs holds the tests of the project's written documentation:
// README.md is a front door (short, the quick start on its first screen, no
// paragraph over 80 words) and every relative link in README.md and
// docs/*.md leads to a file, and a heading, that exists (issue 46).
package docs
