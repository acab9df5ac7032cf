! Persistent requests from Fortran, at 2 ranks, each rank with the other; built with
! `use mpi`, or with `use mpi_f08` when compiled with -cpp -DF08. Each rank sets up a send
! of 16 integers to the other (MPI_Send_init) and a receive of as many (MPI_Recv_init), then
! 10 times starts both (MPI_Startall) and waits for both (MPI_Waitall); then an
! MPI_Ssend_init / MPI_Recv_init pair of one integer started 3 times with MPI_Start and
! waited for with MPI_Wait; every request freed at the end. Per rank: 13 messages, 652 bytes.
program fortran_persistent
#ifdef F08
  use mpi_f08
  implicit none
  type(MPI_Request) :: halo(2), check(2)
#else
  use mpi
  implicit none
  integer :: halo(2), check(2)
#endif
  integer :: ierr, rank, peer, step
  integer :: out(16), in(16), token, got
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  peer = 1 - rank
  out = rank
  token = rank
  call MPI_Recv_init(in, 16, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, halo(1), ierr)
  call MPI_Send_init(out, 16, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, halo(2), ierr)
  do step = 1, 10
    call MPI_Startall(2, halo, ierr)
    call MPI_Waitall(2, halo, MPI_STATUSES_IGNORE, ierr)
  end do
  call MPI_Ssend_init(token, 1, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, check(1), ierr)
  call MPI_Recv_init(got, 1, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, check(2), ierr)
  do step = 1, 3
    call MPI_Start(check(2), ierr)
    call MPI_Start(check(1), ierr)
    call MPI_Wait(check(1), MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(check(2), MPI_STATUS_IGNORE, ierr)
  end do
  call MPI_Request_free(halo(1), ierr)
  call MPI_Request_free(halo(2), ierr)
  call MPI_Request_free(check(1), ierr)
  call MPI_Request_free(check(2), ierr)
  call MPI_Finalize(ierr)
end program fortran_persistent
