// The one translation unit that compiles Boost.Asio (with its TLS streams) and Beast (see net/asio.h).
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
