//go:build unix

package cli

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FindDisplay says which display a window would open on: Wayland
// ($WAYLAND_DISPLAY, its socket under $XDG_RUNTIME_DIR) or X11 ($DISPLAY:
// the local socket /tmp/.X11-unix/XN, its abstract twin, or TCP port
// 6000+N for host:N as SSH forwarding sets it). It connects to make sure
// a server answers, within a second, so that a stale variable gets a clear
// message instead of a toolkit's panic.
func FindDisplay(getenv func(string) string) (string, error) {
	wl, x := getenv("WAYLAND_DISPLAY"), getenv("DISPLAY")
	if wl == "" && x == "" {
		return "", fmt.Errorf("%w: DISPLAY and WAYLAND_DISPLAY are not set", ErrNoDisplay)
	}
	var why []string
	if wl != "" {
		sock := wl
		if !filepath.IsAbs(sock) {
			sock = filepath.Join(getenv("XDG_RUNTIME_DIR"), wl)
		}
		if err := dial("unix", sock); err == nil {
			return "Wayland display " + wl, nil
		}
		why = append(why, fmt.Sprintf("WAYLAND_DISPLAY=%s: nothing answers on %s", wl, sock))
	}
	if x != "" {
		addrs, err := xAddresses(x)
		if err == nil {
			for _, a := range addrs {
				if dial(a[0], a[1]) == nil {
					return "X display " + x, nil
				}
			}
			err = fmt.Errorf("no X server answers on %s", addrs[0][1])
		}
		why = append(why, fmt.Sprintf("DISPLAY=%s: %v", x, err))
	}
	return "", fmt.Errorf("%w: %s", ErrNoDisplay, strings.Join(why, "; "))
}

// xAddresses are the network and address pairs of an X display name
// [host]:N[.screen].
func xAddresses(display string) ([][2]string, error) {
	colon := strings.LastIndex(display, ":")
	if colon < 0 {
		return nil, fmt.Errorf("%q is not a display name like :0 or localhost:10.0", display)
	}
	host, num := display[:colon], display[colon+1:]
	if dot := strings.IndexByte(num, '.'); dot >= 0 {
		num = num[:dot]
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || n > 59535 {
		return nil, fmt.Errorf("%q is not a display name like :0 or localhost:10.0", display)
	}
	if host == "" || host == "unix" || strings.HasPrefix(host, "/") {
		sock := fmt.Sprintf("/tmp/.X11-unix/X%d", n)
		if strings.HasPrefix(host, "/") { // macOS launchd style: /path/to/socket:0
			sock = display[:colon] + ":" + num
		}
		return [][2]string{{"unix", sock}, {"unix", "@" + sock}}, nil
	}
	return [][2]string{{"tcp", net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(6000+n))}}, nil
}

func dial(network, addr string) error {
	c, err := net.DialTimeout(network, addr, time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}
